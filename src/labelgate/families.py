"""The error families triage names, as data: the patterns that identify each, what to check
first, and the conclusion to avoid (docs/triage.md's table)."""

from __future__ import annotations

from typing import Any

__all__ = ["FAMILIES"]

FAMILIES: dict[str, dict[str, Any]] = {
    "index_out_of_range": {
        "patterns": [
            r"t >= 0 && t < n_classes",
            r"cur_target >= 0 && cur_target < n_classes",
            r"srcIndex < srcSelectDimSize",
            r"index out of bounds",
            r"index >= -sizes\[i\]",
            r"idx_dim >= 0 && idx_dim < index_size",
            r"device-side assert",
            r"Device-side assertion",
            r"IndexError: Target -?\d+ is out of bounds",
            r"index out of range in self",
            r"IndexError: index -?\d+ is out of bounds",
            r"hipErrorAssert",
            r"cudaErrorAssert",
            r"Assertion [`'].*[`'] failed",
        ],
        "first_check": "the indices and targets of the failing step against the operator's conditions "
        "(class targets in [0, K) or ignore_index; embedding ids below num_embeddings)",
        "avoid": "concluding that the GPU is faulty: a device-side assert is an index the kernel refused",
    },
    "out_of_memory": {
        "patterns": [
            r"out of memory",
            r"OutOfMemoryError",
            r"CUBLAS_STATUS_ALLOC_FAILED",
            r"can't allocate memory",
            r"Tried to allocate",
            r"MPS backend out of memory",
        ],
        "first_check": "the shapes (batch size, sequence length, image size), tensors kept alive across "
        "steps (losses accumulated with their graph), and what else holds the GPU's memory",
        "avoid": "reading every CUDA error as a lack of memory: only this message means memory",
    },
    "op_unavailable": {
        "patterns": [
            r"not implemented for '",
            r"no kernel image is available",
            r"Could not run '.*' with arguments from the",
            r"not currently implemented for the MPS device",
            r"not supported for",
            r"dtypes not supported",
            r"is not compatible with the current PyTorch installation",
            r"CUDA capabilit(?:y|ies)",
            r"minimum cuda capability",
            r"NotImplementedError",
            r"undefined symbol",
            r"no kernel found",
            r"invalid device function",
            r"Unsupported dtype",
        ],
        "first_check": "the versions (torch, CUDA or ROCm, driver), the GPU's compute capability against the "
        "build's, the backend, the dtype the operator got, and any compiled extension",
        "avoid": "reinstalling everything at random: match the build to the GPU and the dtype to the "
        "operator, one change at a time",
    },
    "device_mismatch": {
        "patterns": [
            r"Expected all tensors to be on the same device",
            r"Input type \(.*\) and weight type \(.*\) should be the same",
            r"Expected object of device type",
            r"different from other tensors on",
            r"found at least two devices",
            r"Expected tensor for argument .* to have the same device",
        ],
        "first_check": "where the model and each input were placed (model.to(device) and every tensor "
        "the step builds, including ones made inside the model or the loss)",
        "avoid": "adding a .to() without knowing where the tensor came from: find the one placed on the "
        "wrong device",
    },
    "other": {
        "patterns": [],
        "first_check": "the first error's message and the line that raised it, on a minimal case",
        "avoid": "treating the later errors as separate causes: they usually follow from the first",
    },
}
