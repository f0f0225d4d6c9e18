"""What the lines of each kind say, and the lines that are never a cause: the words, one place."""

from __future__ import annotations

import re

from .types import Kind

_I = re.IGNORECASE
# The words of each kind, most specific first. Host memory before device memory ("Cannot allocate
# memory" is the host's), NaN before the rest (its abort names the step's data).
_WORDS: tuple[tuple[Kind, re.Pattern], ...] = (
    (Kind.OOM_HOST, re.compile(r"\bMemoryError\b|Cannot allocate memory|std::bad_alloc|oom-kill|Out of memory: Kill"
                               r"|host memory (?:is )?(?:not enough|insufficient)|ENOMEM|HostAlloc failed"
                               r"|plugin/cpu/[^\n]*mem\w*\.cc[^\n]*(?:fail|not enough)|cpu_memory_pool", _I)),
    (Kind.OOM_DEVICE, re.compile(r"out of memory|halMemAlloc|memory (?:isn't|is not|not) enough|Allocate (?:device )?memory failed"
                                 r"|Malloc (?:device )?memory failed|MallocDeviceMemory|device memory (?:is )?(?:not enough|insufficient)"
                                 r"|Malloc for kernel (?:output|input|workspace) failed|DEVICE_MEMORY|\b20700[12]\b|\b207018\b"
                                 r"|more than total mem size|mem_dynamic_allocator", _I)),
    (Kind.NAN_ABORT, re.compile(r"silent data corruption|\bSDC\b|SilentCheck|val = \[(?:nan|inf)\]|global.?norm[^\n]{0,60}(?:greater|abnormal|exceed)"
                                r"|loss (?:is|became|has) (?:nan|inf)|\bnan\b[^\n]{0,60}(?:stop|abort|terminat|detect)"
                                r"|(?:detect|found|contains?)[^\n]{0,30}\b(?:nan|inf)\b|CheckNumerics|abnormal_global_norm", _I)),
    (Kind.HCCL_TIMEOUT, re.compile(r"HCCL[^\n]{0,80}time ?out|time ?out[^\n]{0,80}HCCL|notify wait|Notify register times out"
                                   r"|HCCL_(?:EXEC|CONNECT)_TIMEOUT|event wait timeout|Heartbeat Lost|socket[^\n]{0,40}time[sd]? ?out"
                                   r"|wait for all ranks|collective[^\n]{0,40}time ?out|\b50704[678]\b|wait receiving"
                                   r"|Stream synchroni[sz]e timeout|stream sync timeout|fetch the unique id"
                                   r"|Communicator of group[^\n]{0,40}failed", _I)),
    (Kind.DATA_ERROR, re.compile(r"GetNext|\bdataset\b|MindRecord|MindDataset|data ?queue|device ?queue|PyFunc|map operation"
                                 r"|Exception thrown from (?:dataset|user defined Python function)|data ?loader|batch_op"
                                 r"|GeneratorDataset|minddata|UnicodeDecodeError|\bsample\b", _I)),
    (Kind.COMPILE_ERROR, re.compile(r"compil|build op|kernel build|Build kernel|graph_compiler|Type Join Failed|Shape Join Failed"
                                    r"|Traceback of Net Construct Code|infer ?shape|\bTBE\b|op_compile|Parse (?:graph|python)"
                                    r"|not supported in (?:graph|GRAPH)|JIT Fallback", _I)),
    (Kind.CONFIG_ERROR, re.compile(r"invalid device|device[_ ]id[^\n]{0,30}(?:invalid|out of range|must)|rank_?table|RANK_TABLE"
                                   r"|\.ya?ml\b|config(?:uration)? (?:file|item|key)|ASCEND_RT_VISIBLE_DEVICES|No module named"
                                   r"|ModuleNotFoundError|ImportError|FileNotFoundError|No such file|versions? (?:are )?inconsistent"
                                   r"|environment variable|device_num|world size|not (?:a )?valid (?:value|argument)|KeyError"
                                   r"|Address already in use|errno: 98|failed to bind", _I)),
    (Kind.KILLED, re.compile(r"\bKilled\b|SIGKILL|signal 9\b|SIGTERM|signal 15\b|Segmentation fault|SIGSEGV|core dumped"
                             r"|terminated by signal|was killed|exit(?:ed)? with (?:exception|signal|code -)|exitcode[=: ]+-?\d"
                             r"|received signal|Worker process[^\n]{0,60}exit|terminate called after throwing|\bAborted\b|SIGABRT"
                             r"|Fatal Python error", _I)),
)
_DATA_CHANNEL = re.compile(r"acltdtSendTensor|failed to send|tdt (?:channel|send)|TdtSend|Send data failed|data channel", _I)
_TEARDOWN = re.compile(r"Exception ignored in|Error in atexit|__del__|[Ff]inali[sz]e|Destroy|destroy|ClearResAndExit"
                       r"|terminate called|Release(?:Resource)?|KeyboardInterrupt|SystemExit|at exit|Aborted")
_SCHEDULER = re.compile(r"(?:^|/)(?:scheduler|msrun)[^/]*\.log$")  # msrun's scheduler and its console (every worker echoed)
_CHECKPOINT = re.compile(r"save_checkpoint|save checkpoint|saving checkpoint|ModelCheckpoint|\.ckpt\b|safetensors", _I)
_LOAD = re.compile(r"load_checkpoint|load checkpoint|load_param_into_net|loading checkpoint", _I)
_EVAL = re.compile(r"\beval(?:uat\w*)?\b|\bvalidat\w*", _I)
_TTP = re.compile(r"ttp_saved_checkpoints-step_(\d+)")
# How a text names the rank that failed first, for sure: HCCL saw its heartbeat stop, msrun saw it stop answering.
_NAMING = ("heartbeat_lost", "timed_out_node", "worker_exit")
_ERRORS = ("error", "critical", "exception", "killed", "abnormal_global_norm")


def kind_of(text: str) -> Kind | None:
    for kind, words in _WORDS:
        if words.search(text):
            return kind
    return None
