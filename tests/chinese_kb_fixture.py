"""A small Chinese (Simplified) collection written for these tests: twelve office-procedure paragraphs, one question
each (grade 2 on its own paragraph), in BEIR layout so `init` and the readers take it as is.

Why: the language checks of a candidate (runners/config/model_languages.py) and the multilingual model need a
collection in a language the English model does not know, in a script written without spaces. The text is plain,
natural Mandarin, enough for py3langid to say zho with high confidence; nothing here is copied from elsewhere.
"""

from __future__ import annotations

import json
from pathlib import Path

PARAGRAPHS = [
    ("报销差旅费用", "员工出差回来后，应在十个工作日内提交差旅费报销单，并附上机票、火车票和酒店发票。部门经理审批后，财务部会在每月二十日统一打款。"),
    ("申请年假", "申请年假需要提前两周在人事系统中填写请假申请，写明开始和结束日期。直属主管批准后，系统会自动从年假余额中扣除相应天数。"),
    ("重置电脑密码", "如果忘记了电脑登录密码，可以在登录页面点击忘记密码，通过手机验证码重新设置。新密码至少需要十二个字符，并且包含数字和字母。"),
    ("预订会议室", "预订会议室请使用公司日历，选择时间段后添加会议室作为参会资源。大会议室可容纳三十人，需要行政部确认后才能使用。"),
    ("领取办公用品", "办公用品由行政部统一管理，员工可以在每周二和周四下午到三楼仓库领取笔、笔记本和打印纸，领取时需要登记姓名和部门。"),
    ("打印机故障", "打印机卡纸时，先关闭电源，打开侧面盖板取出纸张。如果屏幕显示错误代码，请拍照并发送给信息技术部的服务台。"),
    ("新员工入职", "新员工入职第一天需要携带身份证和学历证书原件到人事部办理手续，领取工牌和笔记本电脑，并参加半天的安全培训。"),
    ("申请加班费", "加班必须事先得到主管的书面同意。工作日加班按一点五倍工资计算，周末加班按两倍计算，法定节假日按三倍计算。"),
    ("访客登记", "接待外部访客时，员工需要提前一天在前台系统登记访客姓名和来访时间。访客到达后凭身份证领取临时通行证，离开时归还。"),
    ("采购审批流程", "采购金额超过五千元的物品需要提交采购申请，经部门经理和财务总监两级审批，并至少比较三家供应商的报价。"),
    ("远程办公规定", "员工每周最多可以远程办公两天，需要提前在团队日历上标注。远程办公期间必须保持即时通讯软件在线，并按时参加线上会议。"),
    ("医疗保险报销", "门诊医疗费用可以通过公司的补充医疗保险报销。请将病历、发票和费用清单扫描上传到保险公司的网站，一般在十五天内到账。"),
]

QUESTIONS = [
    "出差的机票和酒店费用怎么报销？",
    "我想休年假，应该提前多久申请？",
    "忘记电脑密码了怎么办？",
    "怎样预订公司的会议室？",
    "在哪里可以领到打印纸和笔？",
    "打印机卡纸了应该怎么处理？",
    "第一天上班要带什么证件？",
    "周末加班工资怎么计算？",
    "有客人来公司拜访需要做什么登记？",
    "买一台八千元的设备需要谁批准？",
    "一周可以在家工作几天？",
    "看病的费用能通过公司保险报销吗？",
]


def write_chinese_kb(folder: Path) -> Path:
    """corpus.jsonl, queries.jsonl, qrels/test.tsv under `folder` (created); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for i, (title, text) in enumerate(PARAGRAPHS):
            f.write(json.dumps({"_id": f"d{i}", "title": title, "text": text}, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for i, text in enumerate(QUESTIONS):
            f.write(json.dumps({"_id": f"q{i}", "text": text}, ensure_ascii=False) + "\n")
    (folder / "qrels").mkdir(exist_ok=True)
    rows = ["query-id\tcorpus-id\tscore"] + [f"q{i}\td{i}\t2" for i in range(len(QUESTIONS))]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder
