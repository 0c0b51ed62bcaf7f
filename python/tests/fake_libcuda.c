// A fake CUDA driver library for the runtime's CPU-only unit tests.
//
// It exports the driver entry points kgraph's ctypes binding uses, with the
// real signatures, backed by host memory: device pointers are malloc'ed host
// addresses, copies are memcpy, and cuLaunchKernel runs a few known "kernels"
// on the host (so a plan can be executed end to end without a GPU) and logs
// every launch (name, grid, block, shared bytes, stream, parameter values).
//
// Knobs (read at call time): FAKE_CUDA_INIT_RC (cuInit's result),
// FAKE_CUDA_DEVICES (device count).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

static const char *errorName(int rc) {
  switch (rc) {
  case 0: return "CUDA_SUCCESS";
  case 1: return "CUDA_ERROR_INVALID_VALUE";
  case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
  case 100: return "CUDA_ERROR_NO_DEVICE";
  case 101: return "CUDA_ERROR_INVALID_DEVICE";
  case 218: return "CUDA_ERROR_INVALID_PTX";
  case 500: return "CUDA_ERROR_NOT_FOUND";
  case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  default: return NULL;
  }
}

CUresult cuGetErrorName(int rc, const char **out) {
  const char *n = errorName(rc);
  if (!n) return 1;
  *out = n;
  return 0;
}

CUresult cuGetErrorString(int rc, const char **out) {
  const char *n = errorName(rc);
  if (!n) return 1;
  *out = rc == 100 ? "no CUDA-capable device is detected"
                   : "fake driver error";
  return 0;
}

static int envInt(const char *name, int dflt) {
  const char *v = getenv(name);
  return v ? atoi(v) : dflt;
}

CUresult cuInit(unsigned flags) { return flags ? 1 : envInt("FAKE_CUDA_INIT_RC", 0); }

CUresult cuDeviceGetCount(int *n) {
  *n = envInt("FAKE_CUDA_DEVICES", 1);
  return 0;
}

CUresult cuDeviceGet(int *dev, int ordinal) {
  if (ordinal < 0 || ordinal >= envInt("FAKE_CUDA_DEVICES", 1)) return 101;
  *dev = ordinal;
  return 0;
}

CUresult cuDeviceGetName(char *name, int len, int dev) {
  snprintf(name, len, "Fake GPU %d", dev);
  return 0;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  *ctx = (void *)(uintptr_t)(0x1000 + dev);
  return 0;
}

static void *currentCtx;
CUresult cuCtxSetCurrent(void *ctx) {
  currentCtx = ctx;
  return 0;
}

// --- modules -------------------------------------------------------------------

static char *moduleImage; // one module at a time is enough for the tests
static int modulesLoaded;

CUresult cuModuleLoadData(void **module, const void *image) {
  if (!currentCtx) return 1;
  if (!strstr((const char *)image, ".entry")) return 218;
  free(moduleImage);
  moduleImage = strdup((const char *)image);
  ++modulesLoaded;
  *module = moduleImage;
  return 0;
}

#define MAX_FUNCS 64
static char funcNames[MAX_FUNCS][128];
static int funcSmemLimit[MAX_FUNCS];
static int numFuncs;

CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  char pattern[160];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  if (module != moduleImage || !strstr(moduleImage, pattern)) return 500;
  if (numFuncs == MAX_FUNCS) return 2;
  snprintf(funcNames[numFuncs], 128, "%s", name);
  funcSmemLimit[numFuncs] = 48 * 1024;
  *fn = (void *)(uintptr_t)(numFuncs + 1);
  ++numFuncs;
  return 0;
}

CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
  int i = (int)(uintptr_t)fn - 1;
  if (i < 0 || i >= numFuncs || attr != 8) return 1;
  funcSmemLimit[i] = value;
  return 0;
}

// --- launches ------------------------------------------------------------------

#define MAX_LAUNCHES 64
static char launchLog[MAX_LAUNCHES][512];
static int numLaunches;

static uint64_t u64(void **params, int i) { return *(uint64_t *)params[i]; }
static int32_t i32(void **params, int i) { return *(int32_t *)params[i]; }

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        void *stream, void **params, void **extra) {
  int f = (int)(uintptr_t)fn - 1;
  if (f < 0 || f >= numFuncs || extra) return 1;
  if ((int)smem > funcSmemLimit[f]) return 701;
  const char *name = funcNames[f];
  char args[256] = "";
  if (!strcmp(name, "fake_add_f32")) {
    // (a, b, c, i32 n): c = a + b
    float *a = (float *)u64(params, 0), *b = (float *)u64(params, 1);
    float *c = (float *)u64(params, 2);
    int n = i32(params, 3);
    for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
    snprintf(args, sizeof args, "%#llx,%#llx,%#llx,%d",
             (unsigned long long)u64(params, 0),
             (unsigned long long)u64(params, 1),
             (unsigned long long)u64(params, 2), n);
  } else if (!strcmp(name, "fake_neg_f32")) {
    // (x, y, i64 n, f32 scale): y = -x * scale
    float *x = (float *)u64(params, 0), *y = (float *)u64(params, 1);
    long long n = *(int64_t *)params[2];
    float scale = *(float *)params[3];
    for (long long i = 0; i < n; ++i) y[i] = -x[i] * scale;
    snprintf(args, sizeof args, "%#llx,%#llx,%lld,%g",
             (unsigned long long)u64(params, 0),
             (unsigned long long)u64(params, 1), n, scale);
  } else if (!strcmp(name, "fake_nop")) {
    // (p): touches nothing
    snprintf(args, sizeof args, "%#llx", (unsigned long long)u64(params, 0));
  } else {
    return 1;
  }
  if (numLaunches < MAX_LAUNCHES)
    snprintf(launchLog[numLaunches], 512,
             "%s grid=%u,%u,%u block=%u,%u,%u smem=%u stream=%#llx args=%s",
             name, gx, gy, gz, bx, by, bz, smem,
             (unsigned long long)(uintptr_t)stream, args);
  ++numLaunches;
  return 0;
}

CUresult cuStreamSynchronize(void *stream) { return 0; }

// --- memory --------------------------------------------------------------------

static int liveAllocs;

CUresult cuMemAlloc_v2(uint64_t *ptr, size_t n) {
  if (!n) return 1;
  void *p = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!p) return 2;
  memset(p, 0xCD, n);
  *ptr = (uint64_t)(uintptr_t)p;
  ++liveAllocs;
  return 0;
}

CUresult cuMemFree_v2(uint64_t ptr) {
  free((void *)(uintptr_t)ptr);
  --liveAllocs;
  return 0;
}

CUresult cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n) {
  memcpy((void *)(uintptr_t)dst, src, n);
  return 0;
}

CUresult cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n) {
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return 0;
}

CUresult cuMemsetD8_v2(uint64_t dst, unsigned char v, size_t n) {
  memset((void *)(uintptr_t)dst, v, n);
  return 0;
}

// --- tensor maps -----------------------------------------------------------------

#define MAX_MAPS 64
static char mapLog[MAX_MAPS][512];
static int numMaps;

// Logs every argument; the "map" is the global address followed by the
// dims (enough for a test to see which map a kernel received).
CUresult cuTensorMapEncodeTiled(void *map, int dtype, uint32_t rank,
                                void *addr, const uint64_t *dims,
                                const uint64_t *strides, const uint32_t *box,
                                const uint32_t *estrides, int interleave,
                                int swizzle, int l2, int oob) {
  if (!map || rank < 1 || rank > 5 || ((uintptr_t)addr % 16)) return 1;
  char buf[512];
  int n = snprintf(buf, sizeof buf, "dtype=%d rank=%u addr=%#llx dims=", dtype,
                   rank, (unsigned long long)(uintptr_t)addr);
  for (uint32_t i = 0; i < rank; ++i)
    n += snprintf(buf + n, sizeof buf - n, "%s%llu", i ? "," : "",
                  (unsigned long long)dims[i]);
  n += snprintf(buf + n, sizeof buf - n, " strides=");
  for (uint32_t i = 0; i + 1 < rank; ++i)
    n += snprintf(buf + n, sizeof buf - n, "%s%llu", i ? "," : "",
                  (unsigned long long)strides[i]);
  n += snprintf(buf + n, sizeof buf - n, " box=");
  for (uint32_t i = 0; i < rank; ++i)
    n += snprintf(buf + n, sizeof buf - n, "%s%u", i ? "," : "", box[i]);
  n += snprintf(buf + n, sizeof buf - n, " estrides=");
  for (uint32_t i = 0; i < rank; ++i)
    n += snprintf(buf + n, sizeof buf - n, "%s%u", i ? "," : "", estrides[i]);
  snprintf(buf + n, sizeof buf - n, " interleave=%d swizzle=%d l2=%d oob=%d",
           interleave, swizzle, l2, oob);
  if (numMaps < MAX_MAPS)
    snprintf(mapLog[numMaps], 512, "%s", buf);
  ++numMaps;
  uint64_t *words = (uint64_t *)map;
  memset(words, 0, 128);
  words[0] = (uint64_t)(uintptr_t)addr;
  for (uint32_t i = 0; i < rank; ++i) words[1 + i] = dims[i];
  return 0;
}

// --- inspection for the tests ----------------------------------------------------

int fake_num_maps(void) { return numMaps; }
const char *fake_map(int i) { return i < numMaps ? mapLog[i] : ""; }

int fake_live_allocs(void) { return liveAllocs; }
int fake_modules_loaded(void) { return modulesLoaded; }
int fake_num_launches(void) { return numLaunches; }
const char *fake_launch(int i) { return i < numLaunches ? launchLog[i] : ""; }
int fake_smem_limit(const char *name) {
  for (int i = numFuncs - 1; i >= 0; --i)
    if (!strcmp(funcNames[i], name)) return funcSmemLimit[i];
  return -1;
}
void fake_reset(void) { numLaunches = 0; numMaps = 0; }
