#pragma once
#include "comm.cuh"
