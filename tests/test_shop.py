"""Lesson 06's shop: the tools return the right rows, no argument can change a query, and the
three-step chain (user -> orders -> order details) runs through the practice planner."""
from __future__ import annotations

import json
import sqlite3

import pytest

from course.shop import ITEMS, ORDERS, USERS, Shop, create_shop
from mini_framework import Agent, Executor, ToolCall, connect


@pytest.fixture
def db() -> sqlite3.Connection:
    return create_shop()


@pytest.fixture
def shop(db) -> Shop:
    return Shop(db)


def snapshot(db: sqlite3.Connection) -> dict:
    """Every table's rows, to compare before and after an attack."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {t: sorted(map(tuple, db.execute(f"SELECT * FROM {t}"))) for t in tables}


# -- the rows ---------------------------------------------------------------------------------

def test_the_database_holds_the_example_rows(db):
    assert snapshot(db) == {"users": sorted(USERS), "orders": sorted(ORDERS), "order_items": sorted(ITEMS)}


def test_a_file_database_is_created_and_kept(tmp_path):
    path = tmp_path / "shop.db"
    create_shop(str(path)).close()
    assert snapshot(sqlite3.connect(path))["users"] == sorted(USERS)


def test_get_user_info(shop):
    assert shop.get_user_info("张三") == {"user_id": 1001, "name": "张三", "city": "北京"}
    assert shop.get_user_info("赵六") == {"error": "没有找到用户：赵六"}


def test_get_orders_newest_first_with_totals(shop):
    orders = shop.get_orders(1001)
    assert [o["order_id"] for o in orders] == ["202405240044", "202405230031", "202405220012", "202404180007"]
    assert [o["total"] for o in orders] == [2 * 68 + 4 * 15, 399, 2 * 299 + 29, 89]


def test_get_orders_by_status(shop):
    assert [o["order_id"] for o in shop.get_orders(1001, "pending")] == ["202405240044", "202405230031"]
    assert [o["order_id"] for o in shop.get_orders(1001, status="shipped")] == ["202405220012"]
    assert shop.get_orders(1003) == [] and shop.get_orders(9999) == []


def test_get_order_detail(shop):
    assert shop.get_order_detail("202405220012") == {
        "order_id": "202405220012", "created_at": "2024-05-20", "status": "shipped", "eta": "2024-05-25",
        "items": [{"product": "机械键盘", "quantity": 2, "price": 299.0},
                  {"product": "鼠标垫", "quantity": 1, "price": 29.0}],
        "total": 627.0}
    assert "eta" not in shop.get_order_detail("202405230031")  # not shipped: no delivery date yet
    assert shop.get_order_detail("000000000000") == {"error": "没有找到订单：000000000000"}


def test_the_schemas_the_model_sees(shop):
    specs = {t.name: t.to_openai_tool()["function"] for t in shop.tools}
    assert list(specs) == ["get_user_info", "get_orders", "get_order_detail"]
    assert specs["get_orders"]["parameters"]["required"] == ["user_id"]
    status = specs["get_orders"]["parameters"]["properties"]["status"]
    assert status["anyOf"][0]["enum"] == ["pending", "shipped", "delivered"] and "未发货" in status["description"]
    assert all("self" not in s["parameters"]["properties"] for s in specs.values())


# -- injection --------------------------------------------------------------------------------

ATTACKS = [
    "张三' OR '1'='1",
    "张三' OR 1=1 --",
    "' UNION SELECT user_id, name, city FROM users --",
    "1; DROP TABLE orders",
    "1 OR 1=1",
    "202405220012' OR '1'='1",
    "202405220012'; DELETE FROM orders; --",
    "张三＇ OR ＇1＇=＇1",                # fullwidth apostrophes
    "张\u200b三",                          # a zero-width space inside the name
    "\u202e三张",                          # right-to-left override
    "张三\u0000' OR '1'='1",               # an embedded NUL
    "%", "_", "*", "张%",                   # LIKE wildcards (the queries use =, not LIKE)
    "",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_user_name_changes_the_query(db, shop, attack):
    before = snapshot(db)
    assert shop.get_user_info(attack) == {"error": f"没有找到用户：{attack}"}
    assert snapshot(db) == before


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_order_id_changes_the_query(db, shop, attack):
    before = snapshot(db)
    assert shop.get_order_detail(attack) == {"error": f"没有找到订单：{attack}"}
    assert snapshot(db) == before


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_user_id_or_status_changes_the_query_even_unvalidated(db, shop, attack):
    """Called directly (no schema validation in front), the values are still only compared."""
    before = snapshot(db)
    assert shop.get_orders(attack) == []
    assert shop.get_orders(1001, attack) == []
    assert snapshot(db) == before


@pytest.mark.parametrize("name,arguments", [
    ("get_orders", {"user_id": "1 OR 1=1"}),
    ("get_orders", {"user_id": 1001, "status": "pending' OR '1'='1"}),
    ("get_orders", {"user_id": "1001; DROP TABLE orders"}),
])
def test_through_the_executor_bad_values_do_not_even_reach_sql(db, shop, name, arguments):
    before = snapshot(db)
    [result] = Executor(shop.tools).run_sync([ToolCall("call_1", name, json.dumps(arguments))])
    assert result.failure == "invalid_arguments" and json.loads(result.content)["status"] == "error"
    assert snapshot(db) == before


def test_the_tools_can_run_in_many_threads_at_once(db, shop):
    """The executor runs sync tools in worker threads: one connection, guarded by the shop's lock."""
    ids = [o[0] for o in ORDERS] * 6
    results = Executor(shop.tools, max_concurrency=16).run_sync(
        [ToolCall(f"call_{i}", "get_order_detail", json.dumps({"order_id": order_id})) for i, order_id in enumerate(ids)])
    assert all(r.ok for r in results)
    assert [r.value["order_id"] for r in results] == ids


# -- the chain through the practice planner ----------------------------------------------------

def test_the_user_orders_details_chain_answers_from_the_database(shop):
    client, model = connect()
    result = Agent(client, model, tools=shop.tools).run("帮我看看张三最近买了什么还没发货")
    calls = [(r.call.name, json.loads(r.call.arguments)) for r in result.tool_results]
    assert calls == [("get_user_info", {"user_name": "张三"}),
                     ("get_orders", {"user_id": 1001, "status": "pending"}),
                     ("get_order_detail", {"order_id": "202405240044"}),
                     ("get_order_detail", {"order_id": "202405230031"})]
    assert all(r.ok for r in result.tool_results) and not result.capped and result.iterations == 4
    for fact in ("202405240044", "绿茶", "茶杯", "202405230031", "蓝牙耳机"):
        assert fact in result.text
    assert "202405220012" not in result.text  # shipped: not what was asked


def test_without_a_status_every_order_is_read(shop):
    client, model = connect()
    result = Agent(client, model, tools=shop.tools).run("李四最近买了什么？")
    assert [r.call.name for r in result.tool_results] == ["get_user_info", "get_orders", "get_order_detail"]
    assert "台灯" in result.text


def test_an_unknown_user_ends_the_chain_honestly(shop):
    client, model = connect()
    result = Agent(client, model, tools=shop.tools).run("帮我看看赵六最近买了什么")
    assert [r.call.name for r in result.tool_results] == ["get_user_info"]
    assert "没有找到用户：赵六" in result.text
