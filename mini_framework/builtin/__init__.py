"""Built-in tools: ready-made tools built on the core and the features.

    mail.py   a gated send_email over an outbox folder or SMTP

Needs: the core and the approvals feature.
"""
