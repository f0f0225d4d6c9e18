"""The words of the text-log grammar's data-quality notes (readers/textlog)."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    "log-keys-unread": ("{n:int} training lines print keys that no family of the text-log lexicon takes, so their values "
                        "are not read: {keys}. The first line: {line:q}. A spelling of a known family is one line in "
                        "readers/textlog/lexicon.py.",
                        "{n:int} 行训练日志中有文本日志词表（lexicon）不认识的字段，其数值未读取：{keys}。第一行为：{line:q}。"
                        "若它是已知字段的另一种写法，在 readers/textlog/lexicon.py 中加一行即可。"),
}
