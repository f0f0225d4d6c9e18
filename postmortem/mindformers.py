"""Registers postmortem's training callback with MindFormers, so a yaml can name it.

In the launch script (run_mindformer.py or your own), before the trainer is built:

    import postmortem.mindformers  # noqa: F401  (registers PostmortemCallback)

and in the yaml:

    callbacks:
      - type: MFLossMonitor
      - type: PostmortemCallback
        read_every: 10        # optional: read device values every N steps (MFLossMonitor's per_print_times)

MindFormers builds callbacks other than MFLossMonitor from their yaml keys alone, so the callback
finds the output folder itself (MindFormers' get_output_root_path()). Importing this module
imports MindFormers and MindSpore; the reading path never does.
"""

from __future__ import annotations

from mindformers.tools.register import MindFormerModuleType, MindFormerRegister

from .callback import PostmortemCallback

if not MindFormerRegister.is_exist(MindFormerModuleType.CALLBACK, "PostmortemCallback"):
    MindFormerRegister.register_cls(PostmortemCallback, module_type=MindFormerModuleType.CALLBACK)

__all__ = ["PostmortemCallback"]
