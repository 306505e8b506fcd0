"""A small shop on SQLite (lesson 06, and the demo's orders): users, orders, order items, three tools that read them.

    db = create_shop()                        # an in-memory database with a few users and orders
    shop = Shop(db)
    shop.get_user_info("张三")                 # {'user_id': 1001, 'name': '张三', 'city': '北京'}
    agent = Agent(client, model, tools=shop.tools)
    agent.run("帮我看看张三最近买了什么还没发货")   # get_user_info -> get_orders -> get_order_detail

A question like that needs all three in turn: the user's id before the orders, the order ids before
the details, so it takes an agent loop (lesson 06).

Every query is parameterised (`?` placeholders): a value the model sends is only ever compared
with, never pasted into, the SQL text. So `"张三' OR '1'='1"` is a user name nobody has, and
`"1; DROP TABLE orders"` is an order id nobody has.

Concessions: one connection shared by the tools, guarded by a lock, because the executor runs sync
tools in worker threads (hence `check_same_thread=False`); read-only tools; no pagination.
"""
from __future__ import annotations

import sqlite3
import threading
from typing import Any, Literal, Optional

from ..tools import tool

Status = Literal["pending", "shipped", "delivered"]
STATUS_NAMES = {"pending": "未发货", "shipped": "已发货", "delivered": "已送达"}

SCHEMA = """
CREATE TABLE users (
    user_id  INTEGER PRIMARY KEY,
    name     TEXT NOT NULL UNIQUE,
    city     TEXT NOT NULL
);
CREATE TABLE orders (
    order_id    TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(user_id),
    created_at  TEXT NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'shipped', 'delivered')),
    eta         TEXT
);
CREATE TABLE order_items (
    order_id    TEXT NOT NULL REFERENCES orders(order_id),
    product     TEXT NOT NULL,
    quantity    INTEGER NOT NULL,
    unit_price  REAL NOT NULL
);
"""

USERS = [(1001, "张三", "北京"), (1002, "李四", "上海"), (1003, "王五", "广州")]
ORDERS = [  # order_id, user_id, created_at, status, eta
    ("202404180007", 1001, "2024-04-18", "delivered", None),
    ("202405220012", 1001, "2024-05-20", "shipped", "2024-05-25"),
    ("202405230031", 1001, "2024-05-23", "pending", None),
    ("202405240044", 1001, "2024-05-24", "pending", None),
    ("202405210018", 1002, "2024-05-21", "pending", None),
]
ITEMS = [  # order_id, product, quantity, unit_price
    ("202404180007", "保温杯", 1, 89.0),
    ("202405220012", "机械键盘", 2, 299.0),
    ("202405220012", "鼠标垫", 1, 29.0),
    ("202405230031", "蓝牙耳机", 1, 399.0),
    ("202405240044", "绿茶", 2, 68.0),
    ("202405240044", "茶杯", 4, 15.0),
    ("202405210018", "台灯", 1, 159.0),
]


def create_shop(path: str = ":memory:") -> sqlite3.Connection:
    """A shop database at `path` (a file, or ":memory:"), created and filled with the example rows.

    >>> create_shop().execute("SELECT COUNT(*) FROM orders").fetchone()[0]
    5
    """
    db = sqlite3.connect(path, check_same_thread=False)  # the tools run in the executor's worker threads
    db.row_factory = sqlite3.Row
    with db:
        db.executescript(SCHEMA)
        db.executemany("INSERT INTO users VALUES (?, ?, ?)", USERS)
        db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", ORDERS)
        db.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?)", ITEMS)
    return db


class Shop:
    """Three order tools bound to one database (user -> orders -> order detail): `Shop(db).tools` for an Agent."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.lock = threading.Lock()  # one connection, several worker threads: one query at a time

    def query(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        """Rows as dicts. `params` fill the `?` placeholders: values never become SQL text."""
        with self.lock:
            return [dict(row) for row in self.db.execute(sql, params)]

    @property
    def tools(self) -> list:
        """The three tools, bound to this shop."""
        return [self.get_user_info, self.get_orders, self.get_order_detail]

    @tool
    def get_user_info(self, user_name: str) -> dict:
        """按姓名查找一位用户，返回用户ID、姓名和所在城市

        Args:
            user_name: 用户的姓名，例如张三
        """
        rows = self.query("SELECT user_id, name, city FROM users WHERE name = ?", user_name)
        return rows[0] if rows else {"error": f"没有找到用户：{user_name}"}

    @tool
    def get_orders(self, user_id: int, status: Optional[Status] = None) -> list[dict]:
        """列出一位用户的订单：订单号、下单日期、状态和金额，最近下单的排在前面

        Args:
            user_id: 用户ID，由 get_user_info 返回
            status: 只返回这个状态的订单：pending（未发货）、shipped（已发货）、delivered（已送达）；不填则返回全部
        """
        sql = """SELECT o.order_id, o.created_at, o.status, SUM(i.quantity * i.unit_price) AS total
                 FROM orders o JOIN order_items i USING (order_id)
                 WHERE o.user_id = ? AND (? IS NULL OR o.status = ?)
                 GROUP BY o.order_id ORDER BY o.created_at DESC"""
        return self.query(sql, user_id, status, status)

    @tool
    def get_order_detail(self, order_id: str) -> dict:
        """读取一个订单的明细：买了哪些商品、各几件、单价，订单状态和预计送达日期

        Args:
            order_id: 订单号，由 get_orders 返回
        """
        orders = self.query("SELECT order_id, created_at, status, eta FROM orders WHERE order_id = ?", order_id)
        if not orders:
            return {"error": f"没有找到订单：{order_id}"}
        items = self.query("SELECT product, quantity, unit_price AS price FROM order_items WHERE order_id = ?",
                           order_id)
        order = {key: value for key, value in orders[0].items() if value is not None}  # no eta before shipping
        return {**order, "items": items, "total": sum(i["quantity"] * i["price"] for i in items)}
