"""Built-in tools: ready-made tools built on the core and the features.

    mail/     a gated send_email over an outbox folder or SMTP (addresses, compose, ledger, backends, tool)

Needs: the core and the approvals feature.
"""
