"""A generated Chinese (Simplified) test collection: documents, questions and labels from a fixed seed, no download.

Why: a Chinese collection is where English assumptions collapse silently (issue 46). py3langid labels some Chinese
questions as Wu Chinese (``wuu``): plain Mandarin ones now and then ("怎样取消用户账号？"), and most of those typed
with a Shanghai office's spoken words (哪能 "how", 啥辰光 "when", 伐 as the question particle). Past 10% of the
questions, `init` used to write ``languages: [zho-Hans, wuu-Hans]``, and two languages meant English's analyzer:
whitespace tokens on text without spaces. ``wu_share`` sets the share of questions written the Shanghai way.

Each document is an office procedure about one action on one object ("发票的审批通过财务系统进行……"); each question
asks for that action on that object (grade 2), the object's other procedures are grade 1 (at most two).

    from tests.chinese_fixture import write_chinese_collection
    folder = write_chinese_collection(tmp_path / "data" / "zh_kb", n_queries=1170, wu_share=0.12)

The same arguments always give byte-identical files.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

OBJECTS = ["发票", "合同", "请假申请", "密码", "用户账号", "打印机", "笔记本电脑", "采购订单", "付款", "差旅报销",
           "软件许可证", "数字证书", "月度报告", "访客登记", "会议室预订", "门禁卡", "工资单", "培训课程", "供应商资料",
           "固定资产", "印章使用", "加班记录", "社保缴纳", "快递寄送", "办公用品", "网络权限", "邮箱空间", "出差申请",
           "报价单", "项目预算"]
#: (action, how the document says it, the Mandarin questions, the questions typed with Shanghai words)
ACTIONS = [
    ("审批", "审批", ["怎么审批{o}？", "{o}由谁审批？", "请问{o}的审批流程是什么？"],
     ["{o}哪能审批？", "{o}寻啥人审批个？"]),
    ("提交", "提交", ["{o}要在哪里提交？", "提交{o}需要准备什么？", "请问{o}应该怎么提交？"],
     ["{o}勒啥地方提交？", "{o}哪能提交伐？"]),
    ("修改", "修改", ["{o}可以修改吗？", "已经提交的{o}怎么修改？", "修改{o}要找哪个部门？"],
     ["{o}好改伐？", "{o}哪能改？"]),
    ("取消", "取消", ["怎样取消{o}？", "{o}提交以后还能取消吗？", "取消{o}有什么影响？"],
     ["{o}哪能取消？", "{o}好取消伐？"]),
    ("查询", "查询", ["去哪里查询{o}的进度？", "{o}办到哪一步了怎么查？", "如何查询{o}的记录？"],
     ["{o}个进度到啥地方查？", "{o}办到啥地方了？"]),
    ("归档", "归档", ["{o}什么时候归档？", "{o}归档需要多长时间？", "归档后的{o}放在哪里？"],
     ["{o}啥辰光归档？", "{o}归档要几日？"]),
    ("续期", "续期", ["{o}怎么续期？", "{o}到期前多久可以续期？", "续期{o}要交什么材料？"],
     ["{o}哪能续期？", "{o}啥辰光好续期？"]),
    ("申请", "申请", ["申请{o}需要什么材料？", "新员工怎么申请{o}？", "申请{o}一般要等几天？"],
     ["申请{o}要啥材料？", "{o}哪能申请伐？"]),
]
DEPARTMENTS = ["财务部", "人力资源部", "信息技术部", "行政部", "采购部", "法务部"]
SYSTEMS = ["内部办公系统", "财务系统", "员工自助平台", "服务台工单系统", "电子审批平台"]
DEADLINES = ["三个工作日内", "当天", "一周之内", "两个工作日内", "每月月底前"]
EXTRA = ["如有疑问，请联系服务台。", "紧急情况可以先电话说明，再补交书面材料。", "相关表格可以在公司内网下载。",
         "处理结果会通过邮件通知申请人。", "所有记录保存五年，以备审计。", "节假日期间处理时间可能顺延。"]


@dataclass
class ChineseCollection:
    corpus: dict[str, dict[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _document(rng: random.Random, action: tuple, obj: str) -> tuple[str, str]:
    dep, system, deadline = rng.choice(DEPARTMENTS), rng.choice(SYSTEMS), rng.choice(DEADLINES)
    sentences = [f"{obj}的{action[1]}通过{system}进行，由{dep}负责。",
                 f"每一份{obj}在{action[1]}之后都会登记编号和日期。",
                 f"{dep}会在{deadline}处理收到的请求。", rng.choice(EXTRA)]
    if rng.random() < 0.5:
        sentences.append(rng.choice([e for e in EXTRA if e not in sentences]))
    return f"{obj}{action[0]}", "".join(sentences)


def chinese_collection(seed: int = 0, n_queries: int = 1170, wu_share: float = 0.0) -> ChineseCollection:
    """240 documents (every action on every object) and ``n_queries`` questions, ``wu_share`` of them typed with
    Shanghai words; every question asks for one document."""
    rng = random.Random(seed)
    pairs = [(a, o) for o in range(len(OBJECTS)) for a in range(len(ACTIONS))]
    corpus: dict[str, dict[str, str]] = {}
    about: dict[str, tuple[int, int]] = {}
    for i, (a, o) in enumerate(pairs):
        did = f"d{i:03d}"
        title, text = _document(rng, ACTIONS[a], OBJECTS[o])
        corpus[did] = {"title": title, "text": text}
        about[did] = (a, o)
    n_wu = round(n_queries * wu_share)
    wu_at = set(rng.sample(range(n_queries), n_wu))
    docs = list(about)
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for j in range(n_queries):
        did = docs[j % len(docs)]
        a, o = about[did]
        templates = ACTIONS[a][3] if j in wu_at else ACTIONS[a][2]
        qid = f"q{j:04d}"
        queries[qid] = rng.choice(templates).format(o=OBJECTS[o])
        partial = [d for d, (a2, o2) in about.items() if o2 == o and d != did]
        qrels[qid] = {did: 2, **{d: 1 for d in rng.sample(partial, 2)}}
    return ChineseCollection(corpus, queries, qrels)


def write_chinese_collection(folder: Path, seed: int = 0, n_queries: int = 1170, wu_share: float = 0.0) -> Path:
    """Write the collection under ``folder`` in the BEIR layout (corpus.jsonl, queries.jsonl, qrels/test.tsv)."""
    col = chinese_collection(seed, n_queries, wu_share)
    folder = Path(folder)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
        f.writelines(json.dumps({"_id": d, **doc}, ensure_ascii=False) + "\n" for d, doc in col.corpus.items())
    with open(folder / "queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
        f.writelines(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n" for q, t in col.queries.items())
    with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8", newline="\n") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, docs in col.qrels.items():
            f.writelines(f"{qid}\t{did}\t{grade}\n" for did, grade in docs.items())
    return folder
