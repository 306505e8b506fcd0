"""Built-in tools: ready-made tools built on the core and the features.

    mail/     a gated send_email over an outbox folder or SMTP (addresses, compose, ledger, backends, tool)
    files/    FileToolset: read_file, grep, sed, echo_into confined to one workspace (paths, reading, search,
              editing, toolset); `requires_approval=True` gates the edits

Needs: the core, and the approvals feature for gated tools.
"""
