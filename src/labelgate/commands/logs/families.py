"""The error families triage names, as data: the patterns that identify each, what to check
first, and the conclusion to avoid (docs/triage.md's table)."""

from __future__ import annotations

from typing import Any

__all__ = ["FAMILIES", "KINDS"]

FAMILIES: dict[str, dict[str, Any]] = {
    "distributed_timeout": {
        "patterns": [
            r"Watchdog caught collective operation timeout",
            r"collective operation timeout",
            r"WorkNCCL::checkTimeout",
            r"ncclCommWatchdog",
            r"DistStoreError",
            r"DistNetworkError",
            r"Timed out after \d+ seconds waiting for (?:clients|workers)",
            r"client socket has timed out",
            r"\bSocket Timeout\b",
        ],
        "first_check": "which rank did not reach the collective: a branch run on some ranks only "
        "(evaluation, logging or checkpointing on rank 0), uneven data across ranks (one rank with "
        "an extra or a missing batch), or a rank that failed first (look for its own error above)",
        "avoid": "blaming the network or raising the timeout first: a collective waits for every "
        "rank, and one rank that never arrives stalls them all",
    },
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
            r"\bTarget -?\d+ is out of bounds",
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
            r"(?i:invalid device function)",
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


# Named cases within a family: what they are, what to check, the conclusion to avoid.
KINDS: dict[str, dict[str, str]] = {
    "collective_timeout": {
        "family": "distributed_timeout",
        "first_check": "the collective named (OpType, SeqNum) is the one a rank never reached: "
        "compare the ranks' last steps; a rank that timed out first is not the culprit, the one "
        "missing is",
    },
    "store_timeout": {
        "family": "distributed_timeout",
        "first_check": "the rendezvous: every rank must reach init_process_group with the same "
        "MASTER_ADDR, MASTER_PORT and world size; the workers that never joined are the ones to "
        "look at (did they start, or fail before?)",
    },
    "batch_size_mismatch": {
        "family": "other",
        "first_check": "the shapes of the failing step: the model's output and the target must "
        "have the same first dimension (the batch): a target flattened, or not, unlike the "
        "output (sequence or pixel targets), a collate or model that drops, pads or reshapes "
        "rows, a view over the wrong dimension",
        "avoid": "reading the batch's label values as the cause: the loss compares the shapes "
        "before it reads a value, so a bad value in this batch did not raise this error",
    },
    "checkpoint_class_count": {
        "family": "other",
        "first_check": "the class map: the model was built for another number of classes than the "
        "checkpoint was written with (a trailing blank line in labels.txt, a class added, a map "
        "rebuilt from another split). `labelgate validate --class-names FILE` finds the blank "
        "line (LG009), `labelgate diff` and `pin` compare maps, and "
        "`labelgate.torch.check_state_dict` checks the head before load_state_dict",
        "avoid": "loading with strict=False: it skips the head, and the model trains or predicts "
        "with a freshly initialised one, silently",
    },
}
