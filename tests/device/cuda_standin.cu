/* cuda_standin.cu: the host half of runtime/cairn_device_cuda.h over a stand-in CUDA
 * runtime, so that tests/device/test_device_defects.py drives, without a GPU, what only
 * a GPU would make happen: an allocation failing with a sticky error or for want of
 * memory, a device without concurrent managed access, and a kernel whose registers
 * allow fewer threads than the block asks. Each stand-in replaces one cudart call by a
 * macro before the header is read; the rest (cudaGetErrorString, ...) is the real cudart.
 *
 * usage: cuda_standin sticky|oom|managed0|managed1|bounds THREADS */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cudaError_t standin_malloc_error = cudaSuccess;
static int standin_managed = 1, standin_syncs = 0;

static cudaError_t standin_GetDeviceCount(int *n) {
    *n = 1;
    return cudaSuccess;
}
static cudaError_t standin_HostAlloc(void **p, size_t n, unsigned) {
    *p = calloc(1, n);
    return cudaSuccess;
}
static cudaError_t standin_HostGetDevicePointer(void **d, void *h, unsigned) {
    *d = h;
    return cudaSuccess;
}
template <class T>
static cudaError_t standin_MemcpyToSymbol(const T &, const void *, size_t) {
    return cudaSuccess;
}
static cudaError_t standin_Malloc(void **p, size_t n) {
    if (standin_malloc_error != cudaSuccess) return standin_malloc_error;
    *p = malloc(n);
    return cudaSuccess;
}
static cudaError_t standin_MallocManaged(void **p, size_t n, unsigned) {
    return standin_Malloc(p, n);
}
static cudaError_t standin_Memset(void *p, int v, size_t n) {
    memset(p, v, n);
    return cudaSuccess;
}
static cudaError_t standin_GetDevice(int *d) {
    *d = 0;
    return cudaSuccess;
}
static cudaError_t standin_DeviceGetAttribute(int *v, cudaDeviceAttr attr, int) {
    *v = attr == cudaDevAttrConcurrentManagedAccess ? standin_managed : 0;
    return cudaSuccess;
}
static cudaError_t standin_DeviceSynchronize(void) {
    standin_syncs++;
    return cudaSuccess;
}
static cudaError_t standin_GetLastError(void) { return cudaSuccess; }
static cudaError_t standin_FuncGetAttributes(cudaFuncAttributes *a, const void *) {
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = 640; /* 96 registers a thread: 65536 / 96, in whole warps */
    a->numRegs = 96;
    return cudaSuccess;
}
#define cudaGetDeviceCount       standin_GetDeviceCount
#define cudaHostAlloc            standin_HostAlloc
#define cudaHostGetDevicePointer standin_HostGetDevicePointer
#define cudaMemcpyToSymbol       standin_MemcpyToSymbol
#define cudaMalloc               standin_Malloc
#define cudaMallocManaged        standin_MallocManaged
#define cudaMemset               standin_Memset
#define cudaGetDevice            standin_GetDevice
#define cudaDeviceGetAttribute   standin_DeviceGetAttribute
#define cudaDeviceSynchronize    standin_DeviceSynchronize
#define cudaGetLastError         standin_GetLastError
#define cudaFuncGetAttributes    standin_FuncGetAttributes

#include "cairn_device_cuda.h"

int main(int argc, char **argv) {
    const cairn_loc at = {"standin.cairn", 3, 7};
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "sticky") == 0 || strcmp(mode, "oom") == 0) {
        standin_malloc_error = mode[0] == 's' ? cudaErrorIllegalAddress : cudaErrorMemoryAllocation;
        (void)cairn_device_zeroed(4, sizeof(float), CAIRN_PLACE_DEVICE, at);
        printf("allocated\n");
        return 0;
    }
    if (strncmp(mode, "managed", 7) == 0) {
        standin_managed = mode[7] == '1';
        cairn_device_start();
        int before = standin_syncs;
        cairn_device_launched(at, 0);
        printf("waits=%d\n", standin_syncs - before);
        return 0;
    }
    if (strcmp(mode, "bounds") == 0 && argc > 2) {
        cairn_device_start();
        cairn_device_check_block(NULL, strtoull(argv[2], NULL, 10), at);
        printf("launches\n");
        return 0;
    }
    return 2;
}
