/* The CUDA driver's own definitions: the functions of the loaded object whose DT_SONAME is
 * libcuda.so.1, read from its symbol table. Neither dlsym nor dlopen("libcuda.so.1") can be trusted
 * for this: a library in front of the driver (Nsight Compute's libcuda-injection.so) may answer
 * dlopen("libcuda.so.1") with itself and export the driver's entry points, forwarding each call to
 * what its own lookup found, which is the guard's wrapper. */
#ifndef PK_MULTICAST_GUARD_DRIVER_OBJECT_H
#define PK_MULTICAST_GUARD_DRIVER_OBJECT_H

#define PK_CUDA_DRIVER_SONAME "libcuda.so.1"

/* The driver's definition of function `name`, or NULL where no driver is loaded (yet) or it does
 * not define `name`. Takes the dynamic linker's lock: callers cache what it finds. */
void* driver_definition(const char* name);

#endif
