"""Test-wide settings: every test and every notebook kernel talks to the practice model.

Setting LLM_BASE_URL here (it beats a developer's .env, which never overrides the environment)
keeps real providers, keys and their answers out of test runs and committed outputs.
"""
import os

os.environ["LLM_BASE_URL"] = "practice"
