"""Templates of the CLI's one-line errors (``postmortem/errors.py``): ``error.<slug>`` or
``error.<slug>/<variant>``. Every slug is listed with its meaning in ``slugs.ERRORS``; a test
finds every raise in the code and requires its key here, in both languages, with its parameters.
"""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    "error.run-dir-missing": ("the run folder does not exist", "训练目录不存在"),
    "error.run-dir-not-a-directory": ("expected a run folder, got a file", "这是一个文件，需要的是训练目录"),
    "error.run-dir-unreadable": ("the run folder cannot be read (permissions)", "训练目录无法读取（权限不足）"),
    "error.run-dir-empty": ("the run folder holds no files", "训练目录中没有文件"),
    "error.baseline-not-found": ("the baseline folder does not exist", "基线目录不存在"),
    "error.baseline-not-found/prev": (
        "--baseline prev: no earlier run of experiment {experiment:q} in the archive",
        "--baseline prev：归档中没有实验 {experiment:q} 更早的任务"),
    "error.out-inside-run": (
        "the output folder is inside the run folder; choose another --out",
        "输出目录位于训练目录之内；请用 --out 指定其他目录"),
    "error.out-unwritable": ("cannot create the archive folder: {detail}", "无法创建归档目录：{detail}"),
    "error.out-write-failed": (
        "writing the report failed, nothing was kept: {detail}",
        "写入报告失败，未保留任何部分结果：{detail}"),
    "error.render-failed": (
        "rendering the report failed, nothing was written: {detail}",
        "生成报告失败，未写入任何文件：{detail}"),
    "error.archive-missing": ("the archive folder does not exist", "归档目录不存在"),
    "error.archive-unreadable": ("the archived run cannot be read: {detail}", "无法读取归档的任务：{detail}"),
    "error.archive-version": (
        "archived with schema version {version}; this postmortem reads versions {readable}",
        "归档格式版本为 {version}；当前 postmortem 只能读取版本 {readable}"),
    "error.run-not-archived": ("no archived run {run_id:q}", "归档中没有任务 {run_id:q}"),
    "error.run-id-ambiguous": (
        "run id {run_id:q} is in several experiments ({experiments}); pass --experiment",
        "任务 {run_id:q} 出现在多个实验中（{experiments}）；请用 --experiment 指定"),
    "error.bad-run-id": (
        "run id {name:q} cannot be a folder name (no '/', '\\\\', control characters, leading '.' or '-', at most 128 characters)",
        "任务 ID {name:q} 不能用作目录名（不能含 '/'、'\\\\' 或控制字符，不能以 '.' 或 '-' 开头，最长 128 个字符）"),
    "error.bad-experiment-name": (
        "experiment name {name:q} cannot be a folder name (no '/', '\\\\', control characters, leading '.' or '-', at most 128 characters)",
        "实验名 {name:q} 不能用作目录名（不能含 '/'、'\\\\' 或控制字符，不能以 '.' 或 '-' 开头，最长 128 个字符）"),
    "error.bad-option/lang": ("--lang must be en or zh, got {given:q}", "--lang 只能是 en 或 zh，收到的是 {given:q}"),
    "error.bad-option/format": (
        "unknown format(s) {given}; choose from {choices}",
        "未知的输出格式 {given}；可选 {choices}"),
    "error.bad-option/device-and-peak": (
        "give --device or --peak-tflops, not both",
        "--device 与 --peak-tflops 只能给出其一"),
    "error.bad-option/week-and-since": ("give --week or --since, not both", "--week 与 --since 只能给出其一"),
    "error.bad-option/week": ("--week must look like 2026-W48, got {given:q}", "--week 的格式应为 2026-W48，收到的是 {given:q}"),
    "error.bad-option/no-such-week": ("no such ISO week: {given:q}", "不存在这个 ISO 周：{given:q}"),
    "error.bad-option/since": ("--since must look like 7d or 36h, got {given:q}", "--since 的格式应为 7d 或 36h，收到的是 {given:q}"),
    "error.config-missing": ("config file not found", "找不到配置文件"),
    "error.check-config-missing": ("training config not found", "找不到训练配置文件"),
    "error.check-config-unreadable": ("cannot read the training config: {detail}", "无法读取训练配置文件：{detail}"),
    "error.check-config-unreadable/not-a-file": ("not a regular file (a FIFO, device or folder)", "不是普通文件（FIFO、设备或目录）"),
    "error.check-config-unreadable/too-large": ("{size:bytes}: too large for a config", "{size:bytes}：作为配置文件过大"),
    "error.check-config-unparseable/yaml": ("not valid YAML (line {line})", "不是合法的 YAML（第 {line} 行）"),
    "error.check-config-unparseable/json": ("not valid JSON (line {line})", "不是合法的 JSON（第 {line} 行）"),
    "error.check-config-unparseable/deep": ("nested too deeply to be a config", "嵌套过深，不像配置文件"),
    "error.check-config-unparseable/utf8": ("not UTF-8 text (byte {offset})", "不是 UTF-8 文本（第 {offset} 字节）"),
    "error.check-config-not-training": ("no model, parallel or batch settings: not a training config",
                                        "没有模型、并行或 batch 配置：不是训练配置文件"),

    "error.config-unreadable": ("cannot read config: {detail}", "无法读取配置文件：{detail}"),
    "error.config-invalid/toml": ("not valid TOML: {detail}", "不是合法的 TOML：{detail}"),
    "error.config-invalid/number": ("{key} must be a number, got {given}", "{key} 必须是数字，收到的是 {given}"),
    "error.config-unknown-key": ("unknown setting {key:q}", "未知的配置项 {key:q}"),
    # Outside postmortem's own errors: the CLI's frame around them.
    "error.usage": ("{detail} (see postmortem --help)", "{detail}（见 postmortem --help）"),
    "error.interrupted": ("stopped by the user", "已被用户中止"),
    "error.internal": (
        "{kind}: {detail} (set POSTMORTEM_DEBUG=1 for a traceback)",
        "{kind}：{detail}（设置 POSTMORTEM_DEBUG=1 可查看调用栈）"),
}
