"""The lesson-06 shop, which lives in the framework's demo now: `mini_framework/demo/shop.py`.

    from course.shop import Shop, create_shop     # as lessons 06, 08 and 10 import it

The same names, re-exported, so the lessons and their tests read it where they always did.
"""
from __future__ import annotations

from mini_framework.demo.shop import ITEMS, ORDERS, SCHEMA, STATUS_NAMES, USERS, Shop, Status, create_shop

__all__ = ["ITEMS", "ORDERS", "SCHEMA", "STATUS_NAMES", "USERS", "Shop", "Status", "create_shop"]
