#pragma once
#include "all_gather.cuh"
#include "all_reduce.cuh"
#include "all_to_all.cuh"
#include "blocks.cuh"
#include "copy_engine.cuh"
#include "launch.cuh"
#include "reduce_scatter.cuh"
