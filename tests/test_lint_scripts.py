"""`tasks lint` in scripts without spaces and with optional vowel marks (issue 46): in Chinese, a copy of a paragraph
with 3 of its 370 characters changed is a near-duplicate, the same paragraph in Traditional characters is a
duplicate, and a question copied verbatim from its paragraph is a leak; in Arabic, a copy with vowel marks (tashkeel)
on every word is a duplicate. Before, lint's words were ``\\w+`` runs: whole clauses in Chinese, and Arabic words cut
at every vowel mark."""

from __future__ import annotations

import unicodedata

from custom_tasks.collection import Collection
from runners.labels.lint.lint import lint_collection
from runners.labels.lint.lint_text import char_shingles, words

#: an original paragraph (370 characters) about a city's water supply
ZH = ("城市的供水系统是一座城市最重要的基础设施之一。每天清晨，水厂从附近的河流和水库中取水，经过沉淀、过滤和消毒等多道工序，"
      "再通过埋在地下的管网送到千家万户。为了保证水质安全，检测人员每隔两个小时就要采集一次样本，分析其中的浑浊度、余氯含量和微生物指标。"
      "如果发现任何异常，调度中心会立即启动应急预案，关闭相关阀门并通知受影响的居民。近年来，许多城市开始使用智能水表和压力传感器，"
      "它们可以实时报告管道中的漏水情况，帮助维修队伍在最短时间内找到问题所在。据统计，老旧管网的漏损率曾经高达百分之二十，"
      "经过十年的改造，这一数字已经下降到百分之八左右。专家指出，节约用水不仅需要技术进步，也需要每一位市民养成良好的习惯，"
      "例如及时关闭水龙头、收集雨水浇灌花草，以及选择节水型的家用电器。只有政府、企业和居民共同努力，城市才能拥有更加安全、稳定和可持续的供水。")
#: the same paragraph typed in Traditional characters (Taiwan's forms: 為, 啟)
ZH_HANT = ("城市的供水系統是一座城市最重要的基礎設施之一。每天清晨，水廠從附近的河流和水庫中取水，經過沉澱、過濾和消毒等多道工序，"
           "再通過埋在地下的管網送到千家萬戶。為了保證水質安全，檢測人員每隔兩個小時就要採集一次樣本，分析其中的渾濁度、餘氯含量和微生物指標。"
           "如果發現任何異常，調度中心會立即啟動應急預案，關閉相關閥門並通知受影響的居民。近年來，許多城市開始使用智能水錶和壓力傳感器，"
           "它們可以實時報告管道中的漏水情況，幫助維修隊伍在最短時間內找到問題所在。據統計，老舊管網的漏損率曾經高達百分之二十，"
           "經過十年的改造，這一數字已經下降到百分之八左右。專家指出，節約用水不僅需要技術進步，也需要每一位市民養成良好的習慣，"
           "例如及時關閉水龍頭、收集雨水澆灌花草，以及選擇節水型的家用電器。只有政府、企業和居民共同努力，城市才能擁有更加安全、穩定和可持續的供水。")
ZH_OTHER = {
    "rail": "高速铁路的建设改变了人们出行的方式。过去需要一整天的旅程，现在只要三个小时就能完成。列车运行由中央控制系统统一调度，"
            "每一趟车的位置、速度和到站时间都会实时显示在大屏幕上。乘客可以通过手机购票，进站时只需刷身份证即可。",
    "tea": "茶叶的种植需要温暖湿润的气候和排水良好的土壤。春季采摘的嫩芽品质最好，经过杀青、揉捻和干燥之后，才能制成香气浓郁的绿茶。"
           "不同地区的茶叶因为海拔和土壤的差异，味道也各不相同，因此很多人喜欢收藏来自不同产地的茶叶。",
    "library": "图书馆不仅是借阅书籍的地方，也是社区居民学习和交流的公共空间。许多图书馆提供免费的讲座、展览和儿童阅读活动，"
               "还开设了电子资源平台，读者在家就可以查阅期刊和数据库。志愿者定期整理书架，帮助老年人学习使用电脑。",
}
ZH_QUESTIONS = {
    "copied": "检测人员每隔两个小时就要采集一次样本",  # a clause of the paragraph, verbatim
    "asked": "自来水是怎样检查是否安全的？",  # asked as a user would: no long run of the paragraph
    "rail": "坐高铁怎么买票？",
    "tea": "绿茶是怎么做出来的？",
}


def _collection(corpus: dict[str, str], queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> Collection:
    return Collection(name="T", corpus={d: {"title": "", "text": t} for d, t in corpus.items()}, queries=queries,
                      qrels={"test": qrels})


def _findings(c: Collection) -> dict[str, list[dict]]:
    return {f.check: f.details for f in lint_collection(c).findings}


def _three_characters_changed(text: str) -> str:
    out = list(text)
    for at, new in ((40, "湖"), (180, "快"), (300, "培")):
        assert out[at] != new and unicodedata.category(out[at]) == "Lo"
        out[at] = new
    return "".join(out)


def _chinese(**extra: str) -> Collection:
    corpus = {"water": ZH, **ZH_OTHER, **extra}
    qrels = {"copied": {"water": 2}, "asked": {"water": 2}, "rail": {"rail": 2}, "tea": {"tea": 2}}
    return _collection(corpus, dict(ZH_QUESTIONS), qrels)


def test_a_chinese_copy_with_three_characters_changed_is_a_near_duplicate() -> None:
    edited = _three_characters_changed(ZH)
    assert len(ZH) == 370 and sum(a != b for a, b in zip(ZH, edited)) == 3
    found = _findings(_chinese(edited=edited))
    near = found["near_duplicate_documents"]
    assert [r["documents"] for r in near] == [["edited", "water"]] and near[0]["jaccard"] > 0.9
    assert "exact_duplicate_documents" not in found


def test_the_same_paragraph_in_traditional_characters_is_a_duplicate() -> None:
    assert sum(a != b for a, b in zip(ZH, ZH_HANT)) > 60  # a different string to anything that compares characters
    found = _findings(_chinese(hant=ZH_HANT))
    assert found["exact_duplicate_documents"] == [{"documents": ["hant", "water"]}]


def test_a_question_copied_verbatim_from_its_paragraph_is_a_leak() -> None:
    found = _findings(_chinese())
    leaked = found["leaked_questions"]
    assert [r["query"] for r in leaked] == ["copied"]
    assert leaked[0]["copied_words"] == leaked[0]["query_words"] == len("检测人员每隔两个小时就要采集一次样本")


def test_the_leak_rule_counts_chinese_runs_in_words_not_characters() -> None:
    """A run of 8 words is leakage; in Chinese 8 characters are about 5 words (1.66 characters a word), so a
    10-character run is not (6.0 words), and a 16-character run is (9.6 words)."""
    c = _chinese()
    c.queries["ten"] = "请问老旧管网的漏损率曾经有多高，现在怎么样了"  # "老旧管网的漏损率曾经" (10) + words of its own
    c.queries["sixteen"] = "为什么说它们可以实时报告管道中的漏水情况呢"  # "它们可以实时报告管道中的漏水情况" (16)
    c.qrels["test"].update({"ten": {"water": 2}, "sixteen": {"water": 2}})
    leaked = {r["query"]: r for r in _findings(c)["leaked_questions"]}
    assert set(leaked) == {"copied", "sixteen"}
    assert leaked["sixteen"]["copied_words"] == len("它们可以实时报告管道中的漏水情况")


def test_chinese_documents_on_other_subjects_are_not_near_duplicates() -> None:
    found = _findings(_chinese())
    assert "near_duplicate_documents" not in found and "exact_duplicate_documents" not in found
    assert "unreachable_documents" not in found and "near_duplicate_questions" not in found


def test_chinese_questions_are_shingled_as_written() -> None:
    """Character shingles of a Chinese question are those of the text as typed (no spaces put between characters)."""
    q = "城市的供水管网漏损率是多少？"
    assert words(q) == list(q[:-1])
    assert char_shingles(words(q), 4) == {q[i:i + 4] for i in range(len(q) - 4)}
    c = _chinese()
    c.queries["again"], c.queries["copy"] = "城市供水管网的漏损率曾经是多少", "城市供水管网的漏损率曾经是多少？"
    c.qrels["test"].update({"again": {"water": 2}, "copy": {"water": 1}})
    assert [r["queries"] for r in _findings(c)["near_duplicate_questions"]] == [["again", "copy"]]


def test_words_split_scripts_without_spaces_into_characters_and_keep_other_words_whole() -> None:
    assert words("第3章 iPhone15的电池") == ["第", "3", "章", "iphone15", "的", "电", "池"]
    assert words("コーヒーを飲む") == ["コ", "ー", "ヒ", "ー", "を", "飲", "む"]
    assert words("पासवर्ड रीसेट कैसे करें") == ["पासवर्ड", "रीसेट", "कैसे", "करें"]  # \w would cut at vowel signs
    assert words("Hello, World!  hello world") == ["hello", "world", "hello", "world"]


AR = "ذهب الولد إلى المدرسة في الصباح الباكر وكتب الدرس في دفتره ثم قرأ الكتاب مع أصدقائه في المكتبة الكبيرة"
AR_VOWELLED = ("ذَهَبَ الوَلَدُ إِلَى المَدْرَسَةِ فِي الصَّبَاحِ البَاكِرِ وَكَتَبَ الدَّرْسَ فِي دَفْتَرِهِ "
               "ثُمَّ قَرَأَ الكِتَابَ مَعَ أَصْدِقَائِهِ فِي المَكْتَبَةِ الكَبِيرَةِ")
AR_OTHER = {
    "market": "يفتح السوق القديم أبوابه كل يوم جمعة ويبيع التجار الخضار والفواكه والتوابل والملابس المصنوعة يدويا",
    "weather": ("تشير التوقعات إلى أمطار غزيرة على المناطق الساحلية خلال الأسبوع المقبل "
                "مع انخفاض ملحوظ في درجات الحرارة"),
}


def test_an_arabic_copy_with_tashkeel_on_every_word_is_a_duplicate() -> None:
    # the vowelled copy is the plain text plus marks only (checked without the normaliser: every extra is an Mn)
    assert "".join(ch for ch in AR_VOWELLED if unicodedata.category(ch) != "Mn") == AR
    assert all(any(unicodedata.category(ch) == "Mn" for ch in w) for w in AR_VOWELLED.split())
    corpus = {"school": AR, "vowelled": AR_VOWELLED, **AR_OTHER}
    queries = {"q1": "متى ذهب الولد إلى المدرسة", "q2": "ماذا يبيع التجار في السوق"}
    found = _findings(_collection(corpus, queries, {"q1": {"school": 2}, "q2": {"market": 2}}))
    assert found["exact_duplicate_documents"] == [{"documents": ["school", "vowelled"]}]
    assert words(AR_VOWELLED) == words(AR) == AR.replace("ي", "ی").replace("ك", "ک").split()


def test_the_quick_test_for_scripts_without_spaces_misses_none_of_their_characters() -> None:
    """words() takes the faster pattern when _MAYBE_UNSPACED finds nothing: it must hold every character _TOKEN
    treats as one of a script without spaces (all of Unicode checked)."""
    from runners.labels.lint import lint_text

    missed = [hex(cp) for cp in range(0x110000)
              if lint_text._IS_UNSPACED.match(chr(cp)) and not lint_text._MAYBE_UNSPACED.match(chr(cp))]
    assert missed == []
    sample = "Fată Ștefan كَتَبَ पासवर्ड naïve e\u0301t\u00e9 co_2 h2o 3.14"
    assert lint_text._WORD.findall(sample) == lint_text._TOKEN.findall(sample)
