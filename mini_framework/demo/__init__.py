"""The demo (an application inside the package): the course's support shop, start to end.

    python -m mini_framework.demo            a multi-turn run against the practice model (or your provider)
    python -m mini_framework.demo --no-chart

    shop.py       the lesson-06 shop: users, orders and items in SQLite, three read-only tools
    chart.py      a bar chart as a PNG written with zlib and struct (no Pillow); strip_text for outside pictures
    support.py    SupportDesk: the assistant's tools over one folder (orders, chart, uploads, a long log, a gated
                  refund, a gated voucher, builtin mail over an outbox, FileToolset), and an approver
    __main__.py   the demo itself: a Chat, streamed answers, a policy specialist as a tool (as_tool)

Not part of the framework's core (benchmarks/line_counts.py counts it as its own layer): an app that uses
the core, the features (approvals, budget, media, streaming, chat, delegation) and the built-in tools.
"""
