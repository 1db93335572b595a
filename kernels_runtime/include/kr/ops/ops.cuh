#pragma once
#include "barrier.cuh"
#include "epoch.cuh"
#include "sync.cuh"
#include "tma.cuh"
#include "vec.cuh"
