"""Drive libKGraphCAPI.so from Python through ctypes (no MLIR bindings here).

Usage: kgraph_capi_ctypes.py <path to libKGraphCAPI.so>
Parses kgraph IR, verifies it, runs kgraph-form-kernels and prints the module.
"""

import ctypes
import sys


class Handle(ctypes.Structure):
    """MlirContext, MlirModule, MlirOperation, ...: one opaque pointer."""

    _fields_ = [("ptr", ctypes.c_void_p)]


class StringRef(ctypes.Structure):
    """MlirStringRef. Its data is not NUL-terminated: a c_char_p field would
    read it up to a NUL (past the end, which ASan reports); a char pointer is
    sliced to the length instead."""

    _fields_ = [("data", ctypes.POINTER(ctypes.c_char)), ("length", ctypes.c_size_t)]


class LogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]


StringCallback = ctypes.CFUNCTYPE(None, StringRef, ctypes.c_void_p)


def string_ref(text):
    data = text.encode()
    # The structure keeps the buffer alive.
    return StringRef(ctypes.create_string_buffer(data, len(data)), len(data))


def declare(lib, name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


def main():
    lib = ctypes.CDLL(sys.argv[1])
    c = lambda name, restype, *args: declare(lib, name, restype, *args)
    c("mlirGetDialectHandle__kgraph__", Handle)
    c("mlirDialectHandleGetNamespace", StringRef, Handle)
    c("mlirContextCreate", Handle)
    c("mlirContextDestroy", None, Handle)
    c("mlirDialectRegistryCreate", Handle)
    c("mlirDialectRegistryDestroy", None, Handle)
    c("kgraphRegisterAllDialects", None, Handle)
    c("kgraphRegisterAllPasses", None)
    c("mlirContextAppendDialectRegistry", None, Handle, Handle)
    c("mlirModuleCreateParse", Handle, Handle, StringRef)
    c("mlirModuleGetOperation", Handle, Handle)
    c("mlirModuleDestroy", None, Handle)
    c("mlirOperationVerify", ctypes.c_bool, Handle)
    c("mlirOperationPrint", None, Handle, StringCallback, ctypes.c_void_p)
    c("mlirPassManagerCreate", Handle, Handle)
    c("mlirPassManagerDestroy", None, Handle)
    c("mlirPassManagerGetAsOpPassManager", Handle, Handle)
    c("mlirParsePassPipeline", LogicalResult, Handle, StringRef,
      StringCallback, ctypes.c_void_p)
    c("mlirPassManagerRunOnOp", LogicalResult, Handle, Handle)

    ns = lib.mlirDialectHandleGetNamespace(lib.mlirGetDialectHandle__kgraph__())
    print("dialect handle namespace:", ns.data[: ns.length].decode())

    ctx = lib.mlirContextCreate()
    registry = lib.mlirDialectRegistryCreate()
    lib.kgraphRegisterAllDialects(registry)
    lib.mlirContextAppendDialectRegistry(ctx, registry)
    lib.mlirDialectRegistryDestroy(registry)

    module = lib.mlirModuleCreateParse(ctx, string_ref(
        "func.func @add(%a: tensor<2x3xf16>, %b: tensor<2x3xf16>) -> tensor<2x3xf16> {\n"
        "  %0 = kgraph.add %a, %b : tensor<2x3xf16>, tensor<2x3xf16>\n"
        "  return %0 : tensor<2x3xf16>\n"
        "}\n"))
    assert module.ptr, "parse failed"
    op = lib.mlirModuleGetOperation(module)
    assert lib.mlirOperationVerify(op), "verification failed"

    chunks = []
    collect = StringCallback(lambda s, _: chunks.append(s.data[: s.length].decode()))
    lib.kgraphRegisterAllPasses()
    pm = lib.mlirPassManagerCreate(ctx)
    parsed = lib.mlirParsePassPipeline(
        lib.mlirPassManagerGetAsOpPassManager(pm),
        string_ref("builtin.module(func.func(kgraph-form-kernels))"), collect, None)
    assert parsed.value, "pipeline parse failed: " + "".join(chunks)
    assert lib.mlirPassManagerRunOnOp(pm, op).value, "pass pipeline failed"
    assert lib.mlirOperationVerify(op), "verification failed after the pass"

    chunks.clear()
    lib.mlirOperationPrint(op, collect, None)
    print("".join(chunks))

    lib.mlirPassManagerDestroy(pm)
    lib.mlirModuleDestroy(module)
    lib.mlirContextDestroy(ctx)


if __name__ == "__main__":
    main()
