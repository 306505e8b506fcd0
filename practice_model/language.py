"""Reading text the way the practice model needs to: words, concepts and entities, in 中文 and English.

The planner never "understands" anything. It compares bags of features and pulls typed values
out of the request:

    read("北京和上海哪个更暖和？")      -> Reading: language 'zh', two city entities, tag '#weather', ...
    describe("查询指定城市当前的天气")   -> the features of a tool's text: {'#weather', '天气', '城市', ...}

Features are English word stems, Chinese character bigrams and *tags* from two small tables:
topics ('#weather', '#order', ...) and values ('=USD', '=pending', '=celsius', ...). The tables
are what bridge an English question and a Chinese tool description (and the other way round).

Times of day ('下午4点半', '4:30 pm') become 'clock' entities and IANA zone names ('Asia/Tokyo', UTC)
'timezone' ones (`times.py`); in a request with a time of day, each place's role says whose time is given
('from': '北京时间…') and whose is asked ('to': '…是东京几点'), and the value tag CLOCK joins the features.

Concessions: the tables are small and hand-written; person names are guessed from a list of
common surnames plus context (minus common words that start with one: 余额, 谢谢); only the first
`MAX_TEXT` characters of a message are read, and only its first `MAX_ENTITIES` entities are kept.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from itertools import pairwise
from typing import Any

from .cjk import IDEOGRAPHS
from .numbers import find_numbers
from .times import TIME_ZONE, clock_roles, clocks

MAX_TEXT = 2000                 # characters of a message that are analysed; the rest is ignored
MAX_ENTITIES = 64               # entities kept per message (the first ones): what arguments are filled from
_CJK_CHAR = re.compile(f"[{IDEOGRAPHS}]")
_CJK_RUN = re.compile(f"[{IDEOGRAPHS}]+")
_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")

# -----------------------------------------------------------------------------
# the tables: topic -> English words | Chinese words (an English phrase is written with '_'; a word
# written with '!' counts only as written: 'running!' is about exercise, 'run' (a program) is not)

_TOPICS = """
weather   | weather forecast temperature rain rainy raining | 天气 气温 温度 下雨
weather   | sunny snow snowy windy | 降雨 下雪 晴 阴天
weather   | warm warmer hot hotter cold colder cool cooler climate humid humidity | 暖和 冷 热 凉快 气候 预报 刮风 湿度
weather   | umbrella outdoors go_out | 雨伞 带伞 出门 外出 户外 穿什么
weather   | wind air_quality aqi smog pollution pm2.5 | 风力 风向 风速 空气质量 雾霾 污染
weather   | jog jogging go_for_a_run for_a_run go_running running! | 跑步 晨跑 夜跑 慢跑 散步 户外运动
weather   | picnic hiking | 骑行 爬山 野餐
exercise  | jog jogging go_for_a_run for_a_run go_running running! workout! | 跑步 晨跑 夜跑 慢跑 锻炼 健身 户外运动
add       | add addition plus sum total | 加 相加 加法 加上 之和 总和 求和 合计 一共 总共 加起来
subtract  | subtract subtraction minus difference deduct net | 减 相减 减法 减去 之差 差 差值 相差 净增 净 流失 剩 剩下
multiply  | multiply multiplication product times | 乘 相乘 乘法 乘以 之积 乘积 倍
divide    | divide division quotient | 除 相除 除法 除以 之商
calculate | calculate calculation compute math arithmetic | 计算 算 运算 计算器
calculate | evaluate expression calculator | 算术 表达式 等于
user      | user customer account member profile | 用户 客户 会员 账号 账户 顾客
order     | order purchase buy bought shop shopping | 订单 购买 买 下单 购物
shipping  | ship shipping shipment deliver delivery track tracking logistics parcel | 发货 物流 快递 配送 送达 运单 包裹
detail    | detail | 详情 详细 明细
email     | email mail e-mail inbox | 邮件 邮箱 电邮
send      | send | 发送 发给 寄给
convert   | convert conversion exchange currency currencies exchange_rate | 换成 兑换 汇率 转换 换算 货币 币种 折合
money     | money price cost cheap cheaper expensive | 钱 价格 价钱 费用 便宜 贵 报价
discount  | discount discounted coupon | 折扣 打折 优惠 优惠券
flight    | flight fly plane airline airport | 航班 飞 机票 飞机 航空 机场
stock     | stock ticker nasdaq nyse | 股票 股价 股市 行情
search    | search lookup look_up google web | 搜索 搜 查找 检索 网上
time      | time date clock what_time time_difference timezone time_zone | 时间 日期 几点 几号 星期几 时差 时区
translate | translate translation | 翻译 译成 译为
file      | file document folder directory path | 文件 文档 目录 文件夹 路径
log       | log logs logfile deploy deployment | 日志 部署 发布记录
news      | news headline | 新闻 头条 资讯
location  | city location place | 城市 地点 位置 哪里
hotel     | hotel room accommodation | 酒店 宾馆 住宿 订房
calendar  | meeting calendar schedule event appointment remind reminder | 会议 日程 日历 开会 提醒 预约
joke      | joke funny | 笑话 段子
image     | image picture photo | 图片 图像 照片
product   | product item goods inventory stock_level | 商品 产品 货物 库存
note      | note notes memo memos notebook | 笔记 备忘 备忘录 便签 记事 记事本
"""

# value -> kind | English words | Chinese words: what enum values and typed arguments are made of
_VALUES = """
USD        | currency | usd dollar dollars us$ $ | 美元 美金
CNY        | currency | cny rmb yuan renminbi | 人民币
EUR        | currency | eur euro euros € | 欧元
JPY        | currency | jpy yen | 日元 日币
GBP        | currency | gbp pound pounds sterling £ | 英镑
HKD        | currency | hkd | 港币 港元
KRW        | currency | krw | 韩元
celsius    | unit     | celsius centigrade °c ℃ | 摄氏 摄氏度
fahrenheit | unit     | fahrenheit °f ℉ | 华氏 华氏度
pending    | status   | pending unshipped not_shipped not_yet_shipped | 未发货 还没发货 没发货 待发货
pending    | status   | hasn't_shipped haven't_shipped |
pending    | status   | not_been_shipped awaiting_shipment | 尚未发货 还未发货 没有发货
shipped    | status   | shipped in_transit | 已发货 运输中 已寄出
delivered  | status   | delivered | 已送达 已签收 已收货
cancelled  | status   | cancelled canceled | 已取消
en         | language | english | 英文 英语
zh         | language | chinese mandarin | 中文 汉语 普通话
ja         | language | japanese | 日语 日文
fr         | language | french | 法语 法文
de         | language | german | 德语 德文
es         | language | spanish | 西班牙语
ko         | language | korean | 韩语 韩文
"""

# Chinese words that contain a topic word but mean something else ('打算' is not '算')
_DECOYS = ("除了 出差 差不多 很差 较差 参加 加拿大 加油 更加 加入 乘客 乘坐 乘车 减肥 打算 算了 就算 还算 总算 "
           "不算 预算 冷静 热门 热点 热情 干净 飞快 买单 发送到").split()

_CITIES = """北京 Beijing|上海 Shanghai|广州 Guangzhou|深圳 Shenzhen|杭州 Hangzhou|南京 Nanjing|苏州 Suzhou|
成都 Chengdu|重庆 Chongqing|武汉 Wuhan|西安 Xi'an|天津 Tianjin|长沙 Changsha|郑州 Zhengzhou|青岛 Qingdao|
厦门 Xiamen|济南 Jinan|沈阳 Shenyang|大连 Dalian|哈尔滨 Harbin|长春 Changchun|合肥 Hefei|福州 Fuzhou|
南昌 Nanchang|昆明 Kunming|贵阳 Guiyang|南宁 Nanning|海口 Haikou|三亚 Sanya|拉萨 Lhasa|乌鲁木齐 Urumqi|
兰州 Lanzhou|西宁 Xining|银川 Yinchuan|呼和浩特 Hohhot|太原 Taiyuan|石家庄 Shijiazhuang|宁波 Ningbo|无锡 Wuxi|
东莞 Dongguan|佛山 Foshan|珠海 Zhuhai|桂林 Guilin|丽江 Lijiang|香港 Hong Kong|澳门 Macau|台北 Taipei|
东京 Tokyo|大阪 Osaka|京都 Kyoto|首尔 Seoul|釜山 Busan|新加坡 Singapore|曼谷 Bangkok|吉隆坡 Kuala Lumpur|
河内 Hanoi|雅加达 Jakarta|马尼拉 Manila|新德里 New Delhi|孟买 Mumbai|迪拜 Dubai|伊斯坦布尔 Istanbul|
莫斯科 Moscow|伦敦 London|巴黎 Paris|柏林 Berlin|慕尼黑 Munich|罗马 Rome|米兰 Milan|马德里 Madrid|
巴塞罗那 Barcelona|阿姆斯特丹 Amsterdam|布鲁塞尔 Brussels|维也纳 Vienna|苏黎世 Zurich|日内瓦 Geneva|
斯德哥尔摩 Stockholm|哥本哈根 Copenhagen|奥斯陆 Oslo|赫尔辛基 Helsinki|都柏林 Dublin|里斯本 Lisbon|雅典 Athens|
布拉格 Prague|华沙 Warsaw|开罗 Cairo|内罗毕 Nairobi|纽约 New York|洛杉矶 Los Angeles|旧金山 San Francisco|
芝加哥 Chicago|西雅图 Seattle|波士顿 Boston|华盛顿 Washington|迈阿密 Miami|拉斯维加斯 Las Vegas|多伦多 Toronto|
温哥华 Vancouver|蒙特利尔 Montreal|墨西哥城 Mexico City|圣保罗 Sao Paulo|里约热内卢 Rio de Janeiro|悉尼 Sydney|
墨尔本 Melbourne|奥克兰 Auckland"""

_EN_STOP = set("""a an the is are was were be been am to of in on at for from by with and or not no what whats how
which who whom when where why me my i you your it its this that these those please can could would will shall should
do does did get give tell show let help want need like some any there here value result return given specified
specific tool function use using name number string type e g eg example such as if about much many more most very
also just only than then so into out up current now today provided input output based field param parameter optional
required default info information data list one two first second set via whether""".split())
_CN_STOP = set("""查询 获取 指定 什么 怎么 多少 请问 可以 信息 返回 结果 根据 参数 例如 比如 如果 需要 现在 当前 今天
是否 或者 以及 进行 一下 名称 输入 工具 函数 用于 使用 提供 数据 情况 相关 对应 支持 包括 内容 一个 两个 第一 第二
看看 告诉 知道 帮忙 麻烦 列表""".split())
_FUNCTION_CHARS = set("的了是在吗呢吧啊个和与或及把被给我你他她它们这那请帮么什怎哪谁也都就还很更最")
_CN_NOISE = re.compile("|".join(sorted(_CN_STOP, key=len, reverse=True)) + f"|[{''.join(sorted(_FUNCTION_CHARS))}]")
_PERSON_NAMES = set("张三 李四 王五 赵六 钱七 孙八 小明 小红 小刚 小丽 小王 小李 小张 老王 老李 老张".split())
_SURNAMES = set("王李张刘陈杨赵吴徐孙朱胡郭何林罗郑梁谢宋唐许韩冯邓曹彭曾肖董袁潘蒋蔡余杜叶苏魏吕丁沈姚卢姜崔钟"
                "谭汪范廖贾韦邹孟熊秦邱尹薛闫段雷侯陶黎贺顾郝龚邵严覃戴莫孔汤")
# common words that begin with a surname's character: never a name ('查余额' asks for a balance, '谢谢' is thanks)
_NOT_NAMES = set("""谢谢 谢绝 余额 余下 余数 余量 余款 许多 许可 许久 何时 何处 何必 何况 曾经 范围 范例 顾客
顾问 钟头 钟表 钟点 严重 严格 杜绝 黎明 郑重 胡说 罗列 陈列 林业 叶子 熊猫 段落 雷雨 雷阵
汤圆 莫名 孙子 张开 张贴 李子 朱红 贺卡 苏醒 丁点 韩元 韩国 韩语 韩文 宋体
唐朝 秦朝 姜汤 沈阳""".split())
_NAME_BEFORE = ("用户", "客户", "会员", "同事", "朋友", "员工", "同学", "看看", "给", "帮", "替", "叫", "问", "跟",
                "和", "与", "让", "是", "查", "找", "请", "把", "、", "，", ",", " ", "：", ":")
_NAME_AFTER = ("的", "最近", "先生", "女士", "老师", "同学", "经理", "买", "下单", "订", "发", "说", "在", "是", "和",
               "与", "、", "，", ",", "。", "？", "?", "！", " ", "呢", "吗")
_CAPITAL_STOP = set("""I I'm I'd Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April
May June July August September October November December English Chinese Japanese French German Spanish Korean
Celsius Fahrenheit Euro Euros Dollar Dollars Yen Pound Pounds Please Thanks Thank OK Hi Hello Hey""".split())
_MONTHS = "january february march april may june july august september october november december".split()
_FROM_CUE = re.compile(r"(?:(?<![a-z])from|从|由|自)\s*$")                 # '从上海', 'from Paris'
_TO_CUE = re.compile(r"(?:(?<![a-z])(?:to|into|in)|到|飞|去|往|至|成|为|→|->)\s*$")  # '飞东京', 'to JPY', '换成人民币'



def _parse_table(table: str, width: int) -> list[list[str]]:
    """Split a '|'-separated table into rows of `width` cells."""
    rows = [[cell.strip() for cell in line.split("|")] for line in table.strip().splitlines() if line.strip()]
    return [row for row in rows if len(row) == width]


_SURFACE_TAGS: dict[str, set[str]] = {}     # CJK words, English phrases and symbols -> tags
_STEM_TAGS: dict[str, set[str]] = {}        # English topic words, stemmed -> tags
_WORD_TAGS: dict[str, set[str]] = {}        # English words, exactly (looked up before stems) -> tags
VALUE_KINDS: dict[str, str] = {}            # '=USD' -> 'currency'
VALUE_SURFACES: dict[str, tuple[str, ...]] = {}   # 'USD' -> ('usd', 'dollar', ..., '美元', '美金')


def stem(word: str) -> str:
    """A light English stemmer, consistent rather than correct.

    >>> stem('Orders'), stem('shipped'), stem('cities')
    ('order', 'ship', 'city')
    """
    w = word.lower().replace("’", "'")
    w = w.removesuffix("'s")
    if w == "news" or len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("ing") and len(w) > 5:
        w = w[:-3]
    elif (w.endswith("ed") and len(w) > 4) or w.endswith(("ches", "shes", "sses", "xes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]                                  # 'shipp' -> 'ship'
    return w


for _name, _en, _zh in _parse_table(_TOPICS, 3):
    for _w in _en.split():
        if "_" in _w:
            _SURFACE_TAGS.setdefault(_w.replace("_", " "), set()).add("#" + _name)
        elif _w.endswith("!"):              # this exact word only, not every word with its stem
            _WORD_TAGS.setdefault(_w[:-1], set()).add("#" + _name)
        else:                               # 'times' is exactly multiply, 'timing' is a form of time
            _WORD_TAGS.setdefault(_w, set()).add("#" + _name)
            _STEM_TAGS.setdefault(stem(_w), set()).add("#" + _name)
    for _w in _zh.split():
        _SURFACE_TAGS.setdefault(_w, set()).add("#" + _name)
_KIND_TOPICS = {"currency": "#money", "unit": "#weather", "status": "#shipping", "language": "#translate"}
for _name, _kind, _en, _zh in _parse_table(_VALUES, 4):
    VALUE_KINDS["=" + _name] = _kind
    VALUE_SURFACES[_name] = VALUE_SURFACES.get(_name, ()) + tuple(  # a value may span several rows
        w.replace("_", " ") for w in (_en.split() + _zh.split()))
    for _w in _en.split():                  # a value also names its topic: 'yen' is about money
        _plain = _w.replace("_", " ")
        _table = _WORD_TAGS if _plain.isalpha() else _SURFACE_TAGS
        _table.setdefault(_plain, set()).update({"=" + _name, _KIND_TOPICS[_kind]})
    for _w in _zh.split():
        _SURFACE_TAGS.setdefault(_w, set()).update({"=" + _name, _KIND_TOPICS[_kind]})
for _w in _DECOYS:
    _SURFACE_TAGS.setdefault(_w, set())
CLOCK = "=clock"
"""The value tag of a time of day: a request that holds one ('下午4点半', '9:15') and a tool whose text says it
takes one ('24-hour format (HH:MM)') share it, so a tool that converts a given time outranks one that only tells
the time now (a value tag, not a topic: a description about other things is not contradicted by it)."""
for _w in ("hh:mm", "hh:mm:ss", "24-hour", "24 hour", "24h", "time of day", "o'clock", "24小时制", "时刻", "几点几分"):
    _SURFACE_TAGS.setdefault(_w, set()).add(CLOCK)


def _alternation(surfaces: list[str]) -> re.Pattern:
    """One regex for many words, longest first; English words need word boundaries, Chinese ones do not.

    The lookahead on the first character lets the engine skip most positions at once.
    """
    ordered = sorted(surfaces, key=lambda s: (-len(s), s))
    words = [re.escape(s) for s in ordered if s[:1].isascii() and s[:1].isalnum()]
    others = [re.escape(s) for s in ordered if not (s[:1].isascii() and s[:1].isalnum())]
    firsts = "".join(sorted({re.escape(s[0]) for s in ordered}))
    parts = ([rf"(?<![a-z0-9])(?:{'|'.join(words)})(?![a-z0-9])"] if words else []) + others
    return re.compile(rf"(?=[{firsts}])(?:{'|'.join(parts)})")


_SURFACES = _alternation(list(_SURFACE_TAGS))
CITIES: dict[str, str] = {}                  # every spelling, lowercased for English -> the canonical name
CITY_NAMES: dict[str, tuple[str, str]] = {}  # a canonical name ('北京' or 'Beijing') -> ('北京', 'Beijing')
for _entry in _CITIES.replace("\n", "").split("|"):
    _zh_name, _, _en_name = _entry.partition(" ")
    CITIES[_zh_name] = _zh_name
    CITIES[_en_name.lower()] = _en_name
    CITY_NAMES[_zh_name] = CITY_NAMES[_en_name] = (_zh_name, _en_name)
_CITY_PATTERN = _alternation(list(CITIES))

# -----------------------------------------------------------------------------
# small helpers


def has_cjk(text: str) -> bool:
    """Whether the text contains Chinese characters.

    >>> has_cjk('北京 weather')
    True
    """
    return bool(_CJK_CHAR.search(text or ""))


def detect_language(text: str) -> str:
    """'zh' when the text contains Chinese characters, else 'en'.

    >>> detect_language('你好')
    'zh'
    """
    return "zh" if has_cjk(text) else "en"


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|[^A-Za-z0-9]+")


def split_identifier(name: str) -> tuple[str, ...]:
    """Words of a snake_case or camelCase name (of its first MAX_TEXT characters).

    >>> split_identifier('getWeather_byCity')
    ('get', 'weather', 'by', 'city')
    """
    return _split_identifier((name or "")[:MAX_TEXT])


@lru_cache(maxsize=4096)                    # names come back with every request; the cache never holds huge ones
def _split_identifier(name: str) -> tuple[str, ...]:
    """`split_identifier` on a name already cut to MAX_TEXT."""
    return tuple(w.lower() for w in _CAMEL.split(name) if w)


def _lower(text: str) -> str:
    """Lowercase without changing the length, so offsets stay valid."""
    low = text.lower().replace("’", "'")
    return low if len(low) == len(text) else "".join(c.lower()[:1] or c for c in text).replace("’", "'")


def _tag_hits(text: str) -> list[tuple[int, int, str, frozenset[str]]]:
    """Every table word in the text as (start, end, surface, tags); longer words win."""
    low = _lower(text)
    hits, taken = [], bytearray(len(low))
    for m in _SURFACES.finditer(low):
        hits.append((m.start(), m.end(), m.group(), frozenset(_SURFACE_TAGS[m.group()])))
        taken[m.start():m.end()] = b"\1" * (m.end() - m.start())
    for m in _EN_WORD.finditer(low):
        if not taken[m.start()]:
            tags = _WORD_TAGS.get(m.group()) or _STEM_TAGS.get(stem(m.group()), set())
            if tags:
                hits.append((m.start(), m.end(), m.group(), frozenset(tags)))
    return sorted(hits)


def _plain_features(text: str) -> set[str]:
    """English stems and Chinese bigrams that carry meaning (stop words dropped)."""
    low = _lower(text)
    out = {stem(w) for w in _EN_WORD.findall(low) if w not in _EN_STOP and len(w) > 1}
    for run in _CJK_RUN.findall(_CN_NOISE.sub(" ", low)):
        out.update(run[i:i + 2] for i in range(len(run) - 1))
    return out - _EN_STOP


def describe(text: str) -> frozenset[str]:
    """The features of a tool's name or description: stems, bigrams and tags.

    >>> sorted(describe("查询指定城市当前的天气"))
    ['#location', '#weather', '城市', '天气']
    """
    return _describe(text[:MAX_TEXT] if isinstance(text, str) else "")


@lru_cache(maxsize=4096)                    # the same tools come back with every request of a conversation
def _describe(text: str) -> frozenset[str]:
    """`describe` on text already cut to `MAX_TEXT` (so the cache never holds huge strings)."""
    tags = {tag for *_, found in _tag_hits(text) for tag in found}
    return frozenset(_plain_features(text) | tags)


def tags_of(text: str) -> frozenset[str]:
    """Only the tags of a text.

    >>> sorted(tags_of('celsius'))
    ['#weather', '=celsius']
    """
    return frozenset(f for f in describe(text) if f[:1] in "#=")


# -----------------------------------------------------------------------------
# entities: the typed values a request contains


@dataclass(frozen=True)
class Entity:
    """A value found in a request, ready to become an argument."""

    kind: str
    """'email', 'url', 'credential', 'id_number', 'path', 'quoted', 'date', 'clock', 'timezone', 'city', 'person',
    'code', 'number', or a value kind: 'currency', 'unit', 'status', 'language'."""
    value: Any
    """What goes into an argument: '北京', 35, 'USD', '2024-05-20', '16:30', 'Asia/Tokyo', 'Alice'."""
    text: str
    """The characters as written in the request."""
    start: int
    """Offset of the first character in the request."""
    end: int
    """Offset just past the last character."""
    role: str = ""
    """'from' or 'to' when a cue word stands right before it ('从上海', 'to JPY'), else ''. In a request with a
    time of day, a place's role says whose time it is: 'from' given ('北京时间下午4点半'), 'to' asked ('东京几点')."""


# Secrets and identity numbers, which a model copies into a tool's arguments as readily as a city
# (`filling` gives them to parameters such as api_key, password, token, id_number): a key, token or
# password after a word that says what it is ('API key 是 tk-live-8f3a2c91', 'password: hunter22'),
# a key of a well-known shape ('sk-…'), a Chinese ID number (18 characters with a valid check digit,
# or 15/18 after a word such as 身份证).
_CREDENTIAL = re.compile(r"(?i)(?:api[ _-]?key|access[ _-]?(?:key|token)|secret(?:[ _-]?key)?|(?:auth |bearer )?token|"
                         r"pass(?:word|code|wd)|密钥|秘钥|令牌|密码|口令)\s*(?:是|为|is|:|：|=)?\s*[\"'“‘「]?"
                         r"([A-Za-z0-9][A-Za-z0-9_\-.+/=]{5,127})")
_KEY_SHAPE = re.compile(r"(?<![A-Za-z0-9_-])(?:sk|pk|rk|ak)-[A-Za-z0-9_-]{8,}")
_ID_NUMBER = re.compile(r"(?<![0-9A-Za-z])(?:\d{17}[0-9Xx]|\d{15})(?![0-9A-Za-z])")
_ID_CUE = re.compile(r"(?i)身份证|证件号|id (?:number|card)|passport|ssn")


def _valid_id(number: str) -> bool:
    """Whether an 18-character Chinese ID number has a valid check digit (ISO 7064 MOD 11-2).

    >>> _valid_id("11010519491231002X"), _valid_id("110105194912310021")
    (True, False)
    """
    if len(number) != 18:
        return False
    total = sum(int(d) * (2 ** (17 - i) % 11) for i, d in enumerate(number[:17]))
    return "10X98765432"[total % 11] == number[17].upper()


def secrets_in(text: str) -> list[tuple[str, str, int, int]]:
    """Credentials and ID numbers in a text as (kind, value, start, end).

    >>> [(kind, value) for kind, value, _, _ in secrets_in("API key 是 tk-live-8f3a2c91。身份证号 11010519491231002X")]
    [('credential', 'tk-live-8f3a2c91'), ('id_number', '11010519491231002X')]
    >>> secrets_in("my key is sk-abc123456789"), secrets_in("sort by key name")
    ([('credential', 'sk-abc123456789', 10, 25)], [])
    """
    found: list[tuple[str, str, int, int]] = []
    for m in _CREDENTIAL.finditer(text):
        value = m.group(1).rstrip(".,;:!?")
        if any(c.isdigit() for c in value) or "-" in value or "_" in value:
            found.append(("credential", value, m.start(1), m.start(1) + len(value)))
    for m in _KEY_SHAPE.finditer(text):
        if not any(start <= m.start() < end for _, _, start, end in found):
            found.append(("credential", m.group(), m.start(), m.end()))
    for m in _ID_NUMBER.finditer(text):
        if _valid_id(m.group()) or _ID_CUE.search(text[max(0, m.start() - 12):m.start()]):
            found.append(("id_number", m.group().upper(), m.start(), m.end()))
    return sorted(found, key=lambda f: f[2])


_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_URL = re.compile(r"https?://[^\s\"'“”<>，。]+")
# a file path or glob with a known extension: 'docs/policy.md', 'notes.txt', '*.md', 'src/**/*.py'; also one that
# climbs ('../outside/secret.txt') or names a hidden file ('.env', 'config/.secrets'), as a user (or an attacker) writes
_PATH = re.compile(r"(?<![\w./@:*-])(?:\.\.?/)*(?:(?:[\w*?-][\w*?.-]*/)*[\w*?-][\w*?.-]*\.(?:md|txt|py|json|csv|ya?ml|"
                   r"toml|log|ini|cfg|html?|js|ts|sql|xml|rst|ipynb|png|jpe?g|gif|webp|svg|pdf|eml|docx?|"
                   r"xlsx?|\*)"
                   r"|(?:[\w-][\w.-]*/)*\.[A-Za-z][\w-]*(?:\.[\w-]+)*)(?![\w/])")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”|「([^」\n]+)」|『([^』\n]+)』|‘([^’\n]+)’|《([^》\n]+)》"
                     r"|(?<![A-Za-z])'([^'\n]+)'(?![A-Za-z])")
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday"
_DATE = re.compile(
    r"(?P<iso>\d{4})-(?P<im>\d{1,2})-(?P<id>\d{1,2})(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?"
    r"|(?P<sy>\d{4})/(?P<sm>\d{1,2})/(?P<sd>\d{1,2})"
    r"|(?:(?P<cy>\d{4})年)?(?P<cm>\d{1,2})月(?P<cd>\d{1,2})[日号]"
    rf"|(?i:(?P<em>{'|'.join(_MONTHS)})\.? (?P<ed>\d{{1,2}})(?:st|nd|rd|th)?(?:,? (?P<ey>\d{{4}}))?)"
    r"|大后天|大前天|今天|明天|后天|昨天|前天|今晚|明晚|今早|明早|周末|今年|明年|去年"
    r"|(?:(?:这|本|下|上)个?)?(?:周|星期|礼拜)[一二三四五六日天末]|(?:这|本|下|上)个?(?:周|星期|礼拜|月)"
    rf"|(?i:\b(?:the day after tomorrow|today|tonight|tomorrow|yesterday"
    rf"|(?:(?:this|next|last) )?(?:week|weekend|month|year|{_WEEKDAYS.replace(' ', '|')})(?<=[a-z]))\b)")
_EN_RELATIVE_ALONE = {"week", "weekend", "month", "year"}       # need 'this'/'next'/'last' before them
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:'s)?\b")
_IN_PLACE = re.compile(r"\b(?:in|at)\s+([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)")
_CODE = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z][A-Z0-9]{1,9}(?:[-_.][A-Z0-9]+)*|[A-Za-z]{1,5}[-_]?\d{2,}[A-Za-z0-9-]*)"
                   r"(?![A-Za-z0-9])")
_CODE_STOP = {"I", "OK", "AI", "API", "LLM", "JSON", "HTTP", "URL", "ID", "AM", "PM", "FAQ", "PDF"}
# a discount as the factor it multiplies by: 八折 0.8, 八五折 0.85, 75折 / 7.5折 0.75, 对折 0.5, '20% off' 0.8
DISCOUNT = re.compile(r"(?<![\d.零一二两三四五六七八九十百千万])(?P<zh>[一二三四五六七八九]{1,2}|\d(?:\.?\d)?|对)折"
                      r"(?![合叠腾磨射线])|(?<![\d.])(?i:(?P<en>\d{1,2}(?:\.\d+)?)\s*(?:%|percent)\s*(?:off|discount)\b)")


def discount_rate(m: re.Match) -> float:
    """The factor a DISCOUNT match stands for.

    >>> [discount_rate(DISCOUNT.search(t)) for t in ("打八折", "八五折", "75折", "7.5折", "20% off")]
    [0.8, 0.85, 0.75, 0.75, 0.8]
    """
    if m.group("en"):
        return float(1 - Decimal(m.group("en")) / 100)
    digits = m.group("zh").translate(str.maketrans("一二三四五六七八九对", "1234567895"))
    return float(Decimal(digits) / (10 if len(digits) == 1 or "." in digits else 100))


def _date_value(m: re.Match) -> str:
    """ISO 'YYYY-MM-DD' for a full date, else the text as written."""
    g = m.groupdict()
    year = g["iso"] or g["sy"] or g["cy"] or g["ey"]
    month, day = g["im"] or g["sm"] or g["cm"], g["id"] or g["sd"] or g["cd"]
    if g["em"]:
        month = str(_MONTHS.index(g["em"].lower()) + 1)
        day = g["ed"]
    if year and month and day and 1 <= int(month) <= 12 and 1 <= int(day) <= 31 and not m.group().count(":"):
        return f"{int(year):04d}-{int(month):02d}-{int(day):02d}"
    return m.group()


def _role(text: str, start: int) -> str:
    """'from' / 'to' when a cue word ends right before `start` ('从上海', 'to London')."""
    before = text[max(0, start - 8):start].lower()
    return "from" if _FROM_CUE.search(before) else "to" if _TO_CUE.search(before) else ""


def _people(text: str, taken: bytearray) -> list[tuple[int, int, str]]:
    """Person names: a few classic example names, surname + given name in context, capitalised English."""
    found = []
    for m in _CJK_RUN.finditer(text):
        run, base = m.group(), m.start()
        i = 0
        while i < len(run):
            hit = run[i:i + 2] if run[i:i + 2] in _PERSON_NAMES else ""
            if not hit and run[i] in _SURNAMES:
                before_ok = i == 0 and (base == 0 or text[base - 1] in " ，,、：:") or any(
                    run[:i].endswith(c) for c in _NAME_BEFORE)
                for size in (3, 2):
                    name = run[i:i + size]
                    after = text[base + i + size:]
                    if (before_ok and len(name) == size and not (set(name[1:]) & _FUNCTION_CHARS)
                            and name[:2] not in _NOT_NAMES
                            and not _SURFACES.match(name[1:]) and (not after or after.startswith(_NAME_AFTER))):
                        hit = name
                        break
            if hit and not any(taken[base + i:base + i + len(hit)]):
                found.append((base + i, base + i + len(hit), hit))
                i += len(hit)
            else:
                i += 1
    words = [m for m in _CAPITALISED.finditer(text) if m.group().removesuffix("'s") not in _CAPITAL_STOP]
    i = 0
    while i < len(words):
        j = i + 1                                    # join 'Zhang San', 'John Smith'
        while j < len(words) and j - i < 3 and text[words[j - 1].end():words[j].start()] == " " \
                and not words[j - 1].group().endswith("'s"):
            j += 1
        start, end = words[i].start(), words[j - 1].end()
        name = text[start:end].removesuffix("'s")
        at_sentence_start = not text[:start].strip() or text[:start].rstrip()[-1] in ".!?。！？\n"
        if not at_sentence_start and not any(taken[start:end]):
            found.append((start, start + len(name), name))
        i = j
    return found


def extract_entities(text: str) -> list[Entity]:
    """Every typed value in the text, in order of appearance; earlier kinds win overlaps.

    >>> [(e.kind, e.value) for e in extract_entities("下周五从上海飞东京")]
    [('date', '下周五'), ('city', '上海'), ('city', '东京')]
    """
    found: list[Entity] = []
    taken = bytearray(len(text))

    def add(kind: str, value: Any, start: int, end: int) -> None:
        if start < end and not any(taken[start:end]):
            found.append(Entity(kind, value, text[start:end], start, end, _role(text, start)))
            taken[start:end] = b"\1" * (end - start)

    for m in _EMAIL.finditer(text):
        add("email", m.group(), *m.span())
    for m in _URL.finditer(text):
        add("url", m.group().rstrip(".,;:!?)"), m.start(), m.start() + len(m.group().rstrip(".,;:!?)")))
    for kind, secret, start, end in secrets_in(text):
        add(kind, secret, start, end)
    for m in _PATH.finditer(text):
        add("path", m.group(), *m.span())
    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None)
        add("quoted", inner.strip(), *m.span())
    for m in _DATE.finditer(text):
        if m.group().lower() not in _EN_RELATIVE_ALONE:
            add("date", _date_value(m), *m.span())
    for start, end, hhmm in clocks(text):
        add("clock", hhmm, start, end)
    for m in TIME_ZONE.finditer(text):
        add("timezone", m.group(), *m.span())
    for m in _CITY_PATTERN.finditer(_lower(text)):
        add("city", CITIES[m.group()], *m.span())
    for m in _IN_PLACE.finditer(text):
        if m.group(1) not in _CAPITAL_STOP and m.group(1).split()[0] not in _CAPITAL_STOP:
            add("city", m.group(1), *m.span(1))
    for start, end, name in _people(text, taken):
        add("person", name, start, end)
    for m in DISCOUNT.finditer(text):
        add("number", discount_rate(m), *m.span())
    for m in _CODE.finditer(text):
        if m.group() not in _CODE_STOP and m.group().lower() not in _WORD_TAGS and not m.group().isdigit():
            add("code", m.group(), *m.span())
    for start, end, value in find_numbers(text):
        add("number", value, start, end)
    found.sort(key=lambda e: e.start)
    times = [(e.start, e.end) for e in found if e.kind == "clock"]
    if times:                                   # whose time is given, whose is asked: '北京时间下午4点半是东京几点'
        places = [i for i, e in enumerate(found) if e.kind in ("city", "timezone")]
        roles = clock_roles(text, times, [(found[i].start, found[i].end) for i in places])
        for i, role in zip(places, roles):
            found[i] = replace(found[i], role=role)
    return found


def _blank(text: str, entities: list[Entity]) -> str:
    """The text with every entity replaced by spaces (same length): what is left is the intent."""
    chars = list(text)
    for e in entities:
        chars[e.start:e.end] = " " * (e.end - e.start)
    return "".join(chars)


OPERATORS = {                              # a word or sign between two numbers -> the operation it asks for
    "+": "#add", "加": "#add", "加上": "#add", "plus": "#add",
    "-": "#subtract", "−": "#subtract", "减": "#subtract", "减去": "#subtract", "minus": "#subtract",
    "*": "#multiply", "×": "#multiply", "x": "#multiply", "乘": "#multiply", "乘以": "#multiply", "times": "#multiply",
    "multiplied by": "#multiply", "/": "#divide", "÷": "#divide", "除": "#divide", "除以": "#divide",
    "divided by": "#divide"}


# -----------------------------------------------------------------------------
# reading a request


@dataclass(frozen=True)
class Reading:
    """What the practice model takes from one user message."""

    text: str
    """The message text (at most `MAX_TEXT` characters)."""
    language: str
    """'zh' when the message contains Chinese characters, else 'en'."""
    entities: tuple[Entity, ...]
    """Typed values in order of appearance: cities, numbers, e-mails, quoted strings, ..."""
    tags: frozenset[str]
    """Topics ('#weather') and values ('=pending') the message mentions outside its entities."""
    features: frozenset[str]
    """Stems, bigrams and tags of the intent (entities blanked out): what tools are scored against."""

    def of_kind(self, *kinds: str) -> list[Entity]:
        """The entities of the given kinds, in order.

        >>> read('北京和上海').of_kind('city')[1].value
        '上海'
        """
        return [e for e in self.entities if e.kind in kinds]


def read(text: str) -> Reading:
    """Analyse one user message.

    >>> r = read("What's the weather in Paris and Tokyo?")
    >>> r.language, [e.value for e in r.of_kind("city")], "#weather" in r.tags
    ('en', ['Paris', 'Tokyo'], True)
    """
    return _read(text[:MAX_TEXT] if isinstance(text, str) else "")


@lru_cache(maxsize=512)
def _read(text: str) -> Reading:
    """`read` on text already cut to `MAX_TEXT`."""
    extracted = extract_entities(text)
    intent = _blank(text, extracted)
    entities = extracted[:MAX_ENTITIES]
    tags: set[str] = set()
    for start, end, _surface, found in _tag_hits(intent):
        tags |= found
        for tag in sorted(found):
            if tag in VALUE_KINDS:
                entities.append(Entity(VALUE_KINDS[tag], tag[1:], text[start:end], start, end, _role(text, start)))
    numbers = [e for e in entities if e.kind == "number"]
    for i, e in enumerate(entities):            # '30 pounds', '100美元': the amount's currency is the source
        if e.kind == "currency" and not e.role and any(
                text[n.end:e.start].isspace() or n.end == e.start or text[e.end:n.start].isspace() or e.end == n.start
                for n in numbers):
            entities[i] = replace(e, role="from")
    for left, right in pairwise(numbers):
        operator = OPERATORS.get(text[left.end:right.start].strip(" ()（）").lower())
        if operator:
            tags |= {operator, "#calculate"}
    if any(DISCOUNT.fullmatch(n.text) for n in numbers):
        tags |= {"#discount", "#multiply"}          # '打八折' asks for price × 0.8
    if any(e.kind == "path" for e in extracted):
        tags |= describe("file")                    # 'policy.md' is a file, whatever the sentence around it says
    if any(e.kind == "clock" for e in extracted):
        tags.add(CLOCK)                             # '下午4点半' is a time of day: a tool that takes 'HH:MM' fits
    entities.sort(key=lambda e: e.start)
    return Reading(text, detect_language(text), tuple(entities[:MAX_ENTITIES]), frozenset(tags),
                   frozenset(_plain_features(intent) | tags))


# -----------------------------------------------------------------------------
# small judgements about a whole message

_FILLERS = re.compile(r"(?i)^(?:\s|please|pls|can you|could you|would you|will you|help me|i want to|i'd like to|"
                      r"i would like to|tell me|show me|let me know|search for|search|look up|find|google|remind me to|"
                      r"remind me|提醒我|"
                      r"请问|请你|请|帮我|帮忙|麻烦你|麻烦|给我|我想|我要|搜索一下|搜一下|搜索|查一下|查查|查询|查找|"
                      r"找一下|一下|[,，:：])+")
_TRAILING = re.compile(r"(?i)(?:\s|[?？!！。.,，~]|吗|呢|吧|please)+$")
_DEGREE = "高|低|大|小|多|少|热|冷|贵|便宜|暖和|暖|凉快|凉|强|弱|快|慢"
COMPARE = re.compile(rf"(?i)哪个|哪一个|哪里|哪儿|比较|对比|相比|更({_DEGREE})|最({_DEGREE})|\bwhich\b|\bcompare|"
                     r"\bversus\b|\bvs\b|er than\b|\b(warmer|colder|hotter|cooler|higher|lower|cheaper|bigger|larger|"
                     r"smaller|more|less|most|least)\b")
LOWER_IS_ASKED = re.compile(r"(?i)冷|凉|低|更少|最少|更小|最小|便宜|colder|coolest|cooler|coldest|lower|lowest|less|"
                            r"least|fewer|cheaper|cheapest|smaller|smallest")


# what a tool message says that makes a model stop: "don't call it again", "you already called this"
FINAL = re.compile(r"(?i)do not (?:call|retry|try)|don't (?:call|retry|try)|stop (?:calling|trying|retrying)|give up|"
                   r"no (?:more|further) (?:retries|attempts)|retry budget|exhausted|too many (?:failed )?(?:attempts|"
                   r"retries|errors)|不要再|停止调用|放弃|重试次数")
STOP_REPEATING = re.compile(r"(?i)same arguments|same call|already called|already been called|stop calling|"
                            r"repeat(?:ed|ing)?\b|identical call|重复|已经调用过|不要再调用")
# what a tool description says that makes a model doubt the result and check it again ('结果可能不准确，
# 如有疑问请再次调用确认', 'results may be stale; call again to confirm'): `planning.doubted_calls`
DOUBT = re.compile(r"(?i)(?:可能|或许|也许)[^，,。；;]{0,4}(?:不准|有误|过时|不是最新|出错)|不一定准确|"
                   r"仅供参考.{0,12}(?:再次|重新)|"
                   r"(?:再次|重新|再)(?:调用|查询|请求).{0,6}(?:确认|核实|核对|验证)|"
                   r"\b(?:may|might|could) be (?:stale|outdated|inaccurate|wrong|out of date|incorrect)|"
                   r"\bnot (?:always )?(?:reliable|accurate)\b|"
                   r"call (?:it |this tool )?again to (?:confirm|verify|check)|"
                   r"\b(?:verify|confirm|double-check) by calling")
# a question about today's date, weekday or time (what a model without a clock gets confidently wrong)
DATE_QUESTION = re.compile(r"(?i)(?:今天|今日|现在|当前|目前)[^，,。？?！!]{0,6}"
                           r"(?:几号|几月几[日号]|什么日子|什么日期|日期|星期几|礼拜几|周几|几点|什么时间)|几号了|几点了|"
                           r"\bwhat(?:'s| is) (?:the date|today's date|the day today)\b|\bwhat day is (?:it|today)\b|"
                           r"\btoday's date\b|\bcurrent (?:date|time)\b|\bwhat time is it\b|\bdate today\b")
TIME_QUESTION = re.compile(r"(?i)几点|什么时间|\bwhat time\b|\bcurrent time\b")


def is_date_question(text: str) -> bool:
    """A question about today's date, weekday or time.

    >>> is_date_question("今天几号？"), is_date_question("What's the date today?"), is_date_question("今天天气")
    (True, True, False)
    """
    return bool(DATE_QUESTION.search(text or ""))


# Small talk: a message made only of these words (and punctuation) asks for nothing, so no tool is
# called and none of its words becomes an argument ('谢谢' is not a user name, 'OK' not a code).
_SMALL_TALK_WORDS = {
    "thanks": r"thanks(?: a lot| so much)?|thank you(?: (?:very|so) much)?|thx|ty|cheers|much appreciated|"
              r"appreciate it|谢谢(?:你|您|啦|了)?|多谢|谢啦|感谢(?:你|您)?|辛苦(?:了|啦)?",
    "greeting": r"hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening)|greetings|你好|您好|嗨|哈喽|"
                r"早上好|下午好|晚上好|早安|在吗",
    "goodbye": r"bye(?:[ -]bye)?|goodbye|good night|see you|see ya|再见|拜拜|回头见|晚安",
    "ack": r"ok(?:ay)?|got it|sure|great|cool|perfect|nice|alright|all right|fine|understood|i see|good|"
           r"好的|好吧|好滴|好嘞|好|嗯+|哦|噢|行|可以|收到|明白(?:了)?|知道了|了解|没问题|懂了|太好了|不错|棒",
}
_SMALL_TALK_TOKEN = re.compile("(?i)" + "|".join(f"(?P<{kind}>{words})(?![a-z])"
                                         for kind, words in _SMALL_TALK_WORDS.items())
                               + r"|(?P<filler>there|呀|啊|啦|哈|呢|[\s!！,，.。~～?？、:：;；)）(（]+)")


def small_talk(text: str) -> frozenset[str]:
    """What a message made only of small talk says ('thanks', 'greeting', 'goodbye', 'ack'); empty for anything else.

    >>> sorted(small_talk("好的，谢谢！")), sorted(small_talk("OK")), small_talk("谢谢，那李四呢？")
    (['ack', 'thanks'], ['ack'], frozenset())
    """
    text = (text or "").strip()
    if not text or len(text) > 60:
        return frozenset()
    kinds: set[str] = set()
    at = 0
    for m in _SMALL_TALK_TOKEN.finditer(text):
        if m.start() != at:
            return frozenset()
        at = m.end()
        kinds.add(m.lastgroup or "filler")
    if at != len(text):
        return frozenset()
    return frozenset(kinds - {"filler"})


def is_thanks(text: str) -> bool:
    """A message that only says thank you (perhaps with an 'OK' or a goodbye).

    >>> is_thanks('谢谢！'), is_thanks('thank you'), is_thanks('谢谢，那上海呢？')
    (True, True, False)
    """
    return "thanks" in small_talk(text)


def is_greeting(text: str) -> bool:
    """A message that only says hello (perhaps with an 'OK').

    >>> is_greeting('你好！'), is_greeting('hi, weather?'), is_greeting('Hello there!')
    (True, False, True)
    """
    return "greeting" in small_talk(text)


def salient(text: str) -> str:
    """The part of a request worth passing as free text: polite fillers and question marks trimmed.

    >>> salient("请帮我搜索一下最新的 Python 版本？")
    '最新的 Python 版本'
    """
    core = _TRAILING.sub("", _FILLERS.sub("", text or ""))
    return core.strip() or (text or "").strip()
