"""What the Ascend error codes in a log say: the module that wrote the code and what its family means.

CANN's error codes are six characters, ``E`` + a module + four digits (0000-8999 user errors,
9000-9999 internal errors): CANN 8.5 maintenance reference, "Error Code Description"
(https://www.hiascend.com/document/detail/en/canncommercial/850/maintenref/troubleshooting/troubleshooting_0225.html,
zh: .../zh/canncommercial/850/maintenref/troubleshooting/troubleshooting_0224.html). The
module letters below are that page's list.

The runtime's numeric return codes (aclError, printed as "error code is 507048", "runtime
result = 507011") group by their first digit: 1xxxxx a wrong environment or call, 2xxxxx a
resource not enough (memory), 3xxxxx a service state (a queue full or empty), 5xxxxx an internal
or device failure (CANN 8.5 AscendCL API reference, aclError,
https://www.hiascend.com/document/detail/en/canncommercial/850/API/appdevgapi/aclcppdevg_03_1344.html).

``KINDS`` names the failure kind a code alone settles; the codes it leaves out (EE9999, E39999,
the other internal errors) say only which module failed, and the text around them decides.
"""

from __future__ import annotations

import re

CODE = re.compile(r"(?<![A-Za-z0-9])(E[0-9A-Z]\d{4})(?![0-9])")
# runtime results as MindSpore, torch_npu and CANN print them
RUNTIME = re.compile(r"(?:error code is|runtime result = |error_code = |ret(?:code)?\s*[=:]\s*|aclError\s*[=:]?\s*|result\s*=\s*"
                     r"|ACL error\s*)(\d{6})\b", re.IGNORECASE)

MODULES = {
    "1": "GE", "2": "FE", "3": "AI CPU", "4": "TE Fusion", "7": "Vector operator plugin", "8": "Vector operator",
    "B": "TBE Pass compiler", "C": "Auto Tune", "D": "RL Tune", "E": "Runtime", "F": "LxFusion/AutoDeploy",
    "G": "AOE", "H": "ACL", "I": "HCCL", "J": "HCCP", "K": "Profiling", "L": "Driver", "M": "Queue scheduling",
    "N": "DVPP", "O": "AMCT", "P": "Dump", "Z": "Operator",
}

# Codes whose documented meaning settles the kind (CANN 8.x error code reference pages; the
# HCCL user guide's troubleshooting chapters for EI0001/EI0002/EI0006/EI0008).
KINDS = {
    "EI0001": "config_error",  # abnormal HCCL environment variable configuration
    "EI0002": "hccl_timeout",  # notify wait timeout: a collective waited for a rank that did not come
    "EI0004": "config_error",  # invalid rank table / ranks
    "EI0005": "config_error",  # a collective's arguments differ between ranks (count, dtype, op)
    "EI0006": "hccl_timeout",  # socket build timeout while linking ranks (HCCL_CONNECT_TIMEOUT)
    "EI0008": "config_error",  # the CANN versions of the ranks differ
    "EE1001": "config_error",  # the runtime was given an invalid argument (a device id out of range)
    "EL0004": "oom_device",  # the driver could not allocate device memory
    "E30008": "data_error",  # AI CPU operator timeout: GetNext waited for data that did not come
}
# Modules whose user errors (0000-8999) are raised while a graph or its operators are compiled.
COMPILE_MODULES = frozenset("12478BZ")
# Modules whose user errors say the job was set up wrong: ACL's arguments,
# HCCL's and HCCP's environment and rank table, the profiler's options and paths.
SETUP_MODULES = frozenset("HIJKP")


def module(code: str) -> str | None:
    return MODULES.get(code[1]) if len(code) == 6 else None


def internal(code: str) -> bool:
    return code[2] == "9"


def runtime_family(value: int) -> str:
    """The aclError family of a numeric runtime result: call, resource, service, internal."""
    return {1: "call", 2: "resource", 3: "service", 5: "internal"}.get(value // 100000, "unknown")


def family_kind(code: str) -> str | None:
    """The kind a user error's module implies (an internal error, 9000-9999, implies none)."""
    if len(code) != 6 or internal(code):
        return None
    if code[1] in COMPILE_MODULES:
        return "compile_error"
    if code[1] in SETUP_MODULES:
        return "config_error"
    return None


def first_code(text: str) -> str | None:
    m = CODE.search(text)
    return m.group(1) if m else None


def runtime_code(text: str) -> int | None:
    m = RUNTIME.search(text)
    return int(m.group(1)) if m else None
