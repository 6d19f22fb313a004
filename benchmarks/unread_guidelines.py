"""Guideline search and the memory block for rules the model does not read (Chinese, Japanese,
Korean, Russian).

    python benchmarks/unread_guidelines.py           # search and context_for, every request kind
    python benchmarks/unread_guidelines.py --pairs   # the evidence of every (request, rule) pair

18 rules in those scripts, as users write them (10 learnt from a critique and its task, three
of those repeated by more long critiques; 8 added alone), and 10 English rules are put into a
fresh bank with the real MiniLM model. Each unread rule is asked for by its own words, by a task
it applies to in its language, and by that task asked politely; 16 requests about other things
in the same scripts, and 11 asked politely, should find no rule. English tasks for the English
rules check that those are found as before. `guidelines.search(k=5)` and
`context_for(task).guidelines`. Written by hand for session 23 (`search.UNREAD_MIN_HELD`): a
small set, to compare versions, not to quote as a rate.

`--pairs` reads, for every request and every rule, the evidence from the bank's keyword index
(the BM25 share, the request's tokens the rule holds) and prints what each bar lets through.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HitTally, default_model_dir  # noqa: E402

#: (rule, critique it was learnt from or None (added alone), the task of that critique, a task
#: the rule applies to, in its language, the same task asked politely ("请帮我…", "…てください"))
RULES = [
    ("提交信息必须用中文书写。",
     "提交信息必须用中文书写。团队里很多人英文不好，上次的英文提交信息大家都看不懂，回顾的时候浪费了很多时间。",
     "提交修复登录问题的代码", "写一条提交信息，说明修复了登录超时的问题",
     "请帮我写一条提交信息，说明修复了登录超时的问题"),
    ("不要在SQL中使用f-string，请使用参数化查询。",
     "你在查询订单的函数里用f-string拼接了SQL，这会导致SQL注入。不要在SQL中使用f-string，请使用参数化查询。",
     "写一个按用户查询订单的函数", "写一个按日期查询订单的SQL函数",
     "请帮我写一个按日期查询订单的SQL函数"),
    ("函数不得超过四十行。", None, None, "重构这个超过一百行的函数",
     "请帮我重构这个超过一百行的函数"),
    ("所有公共函数都要写文档字符串。", None, None, "为公共函数补充文档字符串",
     "请帮我为公共函数补充文档字符串"),
    ("日志里不要打印用户的密码和令牌。",
     "日志里打印了用户的密码，安全审计时被发现了，必须马上修复。日志里不要打印用户的密码和令牌，调试信息也一样。",
     "给登录接口加上调试日志", "给支付接口加上日志",
     "请帮我给支付接口加上日志"),
    ("数据库迁移前必须先备份。", None, None, "执行用户表的数据库迁移",
     "请帮我执行用户表的数据库迁移"),
    ("変数名はキャメルケースで書く。", None, None, "新しいクラスの変数名を決める",
     "新しいクラスの変数名を決めてください"),
    ("インデントはスペース四つ。", None, None, "Pythonファイルのインデントを直す",
     "Pythonファイルのインデントを直してください"),
    ("エラーメッセージは日本語で表示すること。",
     "ユーザーから英語のエラーメッセージが分からないという問い合わせが多かった。エラーメッセージは日本語で表示すること。"
     "技術的な詳細はログに出してください。",
     "ログイン画面のエラー処理を実装する", "フォームの入力チェックのエラーメッセージを作る",
     "フォームの入力チェックのエラーメッセージを作ってください"),
    ("本番環境へのデプロイは金曜日に行わない。",
     "金曜日の夕方にデプロイして週末に障害が起きたが、対応できる人がいなかった。本番環境へのデプロイは金曜日に行わない。",
     "新機能を本番環境にリリースする", "本番環境に新しいバージョンをデプロイする",
     "本番環境に新しいバージョンをデプロイしてください"),
    ("テストではデータベースをモックしない。", None, None, "注文サービスのテストを書く",
     "注文サービスのテストを書いてください"),
    ("顧客へのメールは必ず敬語で書くこと。",
     "顧客へのメールがくだけすぎていて、失礼だというクレームが来た。顧客へのメールは必ず敬語で書くこと。",
     "顧客に納期の遅れを知らせるメールを書く", "顧客への謝罪メールを書く",
     "顧客への謝罪メールを書いてください"),
    ("커밋 메시지는 한국어로 작성하세요.", None, None, "로그인 버그 수정 커밋 메시지 작성",
     "로그인 버그 수정 커밋 메시지를 작성해 주세요"),
    ("배포 전에 반드시 테스트를 실행하세요.",
     "테스트를 실행하지 않고 배포해서 결제 기능이 멈췄습니다. 배포 전에 반드시 테스트를 실행하세요.",
     "결제 서비스 새 버전 배포", "새 버전을 배포하기 전에 확인할 것",
     "새 버전을 배포하기 전에 확인할 것을 알려 주세요"),
    ("Сообщения коммитов пишите на русском языке.", None, None,
     "Написать сообщение коммита для исправления ошибки входа",
     "Пожалуйста, напишите сообщение коммита для исправления ошибки входа"),
    ("Значения в запросы к базе передавайте только параметрами.",
     "В функции поиска заказов запрос к базе собран через форматирование строки, это инъекция. "
     "Значения в запросы к базе передавайте только параметрами.",
     "Написать функцию поиска заказов", "Написать функцию поиска пользователей в базе",
     "Пожалуйста, напишите функцию поиска пользователей в базе"),
    ("Перед миграцией базы данных обязательно делайте резервную копию.", None, None,
     "Провести миграцию базы данных пользователей",
     "Пожалуйста, проведите миграцию базы данных пользователей"),
    ("Отвечайте клиентам вежливо и на «вы».",
     "Ответ клиенту был слишком резким, клиент пожаловался. Отвечайте клиентам вежливо и на «вы».",
     "Ответить клиенту на вопрос о доставке", "Ответить клиентам на жалобу о задержке",
     "Пожалуйста, ответьте клиентам на жалобу о задержке"),
]
#: Requests about other things, in the same scripts: no rule above is about them.
UNRELATED = [
    "给客户写一封道歉信", "统计本季度的销售额", "优化首页的加载速度", "设置每日自动备份",
    "会議の議事録をまとめる", "画像のサイズを一括で変更する", "チームの飲み会の場所を予約する",
    "新入社員のオンボーディング資料を作成する", "プリンターのトナーを交換する", "年末調整の書類を提出する",
    "고객 문의 메일에 답장하기", "회의실 예약하기", "Подготовить презентацию для клиента",
    "Настроить резервное копирование сервера", "Заказать пиццу для команды",
    "翻訳の品質を確認する",
]
#: The same kind, asked as people ask an agent: polite endings every script shares with rules
#: ("…してください", "…하세요", "请…").
UNRELATED_POLITE = [
    "请帮我统计本季度的销售额", "请帮我给客户写一封道歉信", "请帮我设置每日自动备份",
    "会議の議事録をまとめてください", "画像のサイズを一括で変更してください",
    "年末調整の書類を提出してください", "チームの飲み会の場所を予約してください",
    "회의실을 예약해 주세요", "고객 문의 메일에 답장하세요", "회의 일정을 정리하세요",
    "Пожалуйста, подготовьте презентацию для клиента",
]
#: More critiques that repeat three of the rules (each learnt again: merged, its sources grow),
#: as a rule the team keeps stating does: a long keyword text.
AGAIN = {
    0: [("提交信息又是英文的。提交信息必须用中文书写，这一点已经说过很多次了，新来的同事也要遵守，请在代码审查时检查。",
         "提交用户注册功能"),
        ("这次的提交信息写得很好，但还是英文。提交信息必须用中文书写，否则运维同事在排查问题时无法快速理解改动的内容。",
         "提交性能优化的改动"),
        ("请注意：提交信息必须用中文书写。标题要简短地说明改了什么，正文再说明为什么这样改，以及有没有影响到其他模块。",
         "提交数据导出功能")],
    9: [("また金曜日の午後にリリースしようとしていた。本番環境へのデプロイは金曜日に行わない。週明けの月曜日か火曜日に予定を組み直すこと。",
         "決済機能の改修をリリースする"),
        ("金曜日の夜に緊急でない修正をデプロイして、土曜日の朝に問い合わせが殺到した。本番環境へのデプロイは金曜日に行わない。緊急の場合は責任者の承認を得ること。",
         "検索機能の修正を本番環境に反映する")],
    13: [("이번에도 테스트 없이 배포해서 로그인이 안 되는 문제가 생겼습니다. 배포 전에 반드시 테스트를 실행하세요. "
          "자동화된 테스트가 없다면 최소한 주요 기능은 직접 확인하세요.",
          "로그인 기능 수정 배포"),
         ("배포 전에 반드시 테스트를 실행하세요. 테스트가 실패하면 배포를 멈추고 원인을 먼저 찾으세요. 급하다는 이유로 건너뛰면 안 됩니다.",
          "주문 서비스 긴급 패치 배포")],
}
#: English rules beside them, and a task each applies to (read by the model: unchanged).
ENGLISH = [
    ("Use parameterized queries for SQL; never format values into the query string.",
     "Write a function that looks up orders by customer id"),
    ("Write commit messages in the imperative mood.", "Write the commit message for the login fix"),
    ("Keep functions under 40 lines.", "Refactor the 120-line export function"),
    ("Add type hints to every public function.", "Add a public helper to parse dates"),
    ("Never log passwords or access tokens.", "Add debug logging to the login endpoint"),
    ("Take a backup before running a database migration.", "Migrate the users table"),
    ("Answer customers politely and thank them for reporting.", "Reply to a customer complaint"),
    ("Do not deploy to production on Fridays.", "Deploy the new version to production"),
    ("Indent Python code with four spaces.", "Fix the indentation of this Python file"),
    ("Write docstrings for public functions.", "Document the public API of the parser module"),
]


def requests() -> list[tuple[str, str, int | None]]:
    """(kind, request, index of the rule it asks for, None for an unrelated request)."""
    out: list[tuple[str, str, int | None]] = []
    for n, (rule, _critique, _task, applies, polite) in enumerate(RULES):
        out += [("own words", rule, n), ("task", applies, n), ("task, polite", polite, n)]
    return out + [("unrelated", text, None) for text in UNRELATED] + [
        ("unrelated, polite", text, None) for text in UNRELATED_POLITE]


def fill(bank) -> tuple[list[str], list[str]]:
    """The rules into `bank`: ids of the unread ones, then of the English ones."""
    ids = []
    for n, (rule, critique, task, _applies, _polite) in enumerate(RULES):
        if critique is None:
            entry = bank.guidelines.add(rule)
        else:
            entry = bank.guidelines.learn(critique, task=task, rules=[{"text": rule}]).entries[0]
        assert entry.action == "added", (rule, entry)
        ids.append(entry.guideline_id)
        for again, again_task in AGAIN.get(n, []):
            entry = bank.guidelines.learn(again, task=again_task, rules=[{"text": rule}]).entries[0]
            assert entry.action == "merged" and entry.guideline_id == ids[-1], (rule, entry)
    english = [bank.guidelines.add(rule).guideline_id for rule, _task in ENGLISH]
    return ids, english


def figures(model_dir: str | None) -> None:
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding

    with tempfile.TemporaryDirectory(prefix="unread-guidelines-") as root, Skillbank.open(
            root, embedding_function=MiniLMEmbedding(model_dir=model_dir),
            include_bundled=False) as bank:
        ids, english = fill(bank)
        tally = HitTally()
        for kind, text, wanted in requests():
            found = {"search": [h.id for h in bank.guidelines.search(text, k=5)],
                     "block": [h.id for h in bank.context_for(text).guidelines]}
            for face, got in found.items():
                if tally.add((face, kind), got, None if wanted is None else ids[wanted]):
                    continue
                if wanted is None:
                    print(f"  {face} false hit ({kind}): {text} -> "
                          f"{[bank.guidelines.get(i).text for i in got]}")
                else:
                    print(f"  {face} not found ({kind}): {text}")
        for n, (_rule, task) in enumerate(ENGLISH):
            for face, got in (("search", [h.id for h in bank.guidelines.search(task, k=5)]),
                              ("block", [h.id for h in bank.context_for(task).guidelines])):
                tally.add((face, "English task"), got, english[n])
    tally.print([("face", 7), ("request", 17)], "other rules", "requests found some rule")


def pair_figures(model_dir: str | None) -> None:
    """The evidence of every (request, rule) pair, read from the bank's own keyword index: the
    BM25 share `guidelines.search` had as its only keyword evidence (`search.MIN_KEYWORD`), and
    how many of the request's tokens the rule's keyword text holds (`HybridIndex.held_terms`,
    what `search.UNREAD_MIN_HELD` counts), beside the share of them (experience recall's
    measure, `recall.MIN_SHARED_TOKENS`, with the rule's own words in the request)."""
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding
    from skillbank.keyword import tokenize
    from skillbank.memories.guidelines.search import MIN_KEYWORD

    pairs = []  # (own rule?, unrelated?, BM25 share, tokens held, share, request, its tokens)
    with tempfile.TemporaryDirectory(prefix="unread-guidelines-") as root, Skillbank.open(
            root, embedding_function=MiniLMEmbedding(model_dir=model_dir),
            include_bundled=False) as bank:
        ids, english = fill(bank)
        index = bank.guidelines.index
        rules = {gid: set(tokenize(bank.guidelines.get(gid).text)) for gid in ids + english}
        for kind, text, wanted in requests():
            words = set(tokenize(text))
            bm25 = index.keyword(text, 200, {"status": "active"})
            for gid in ids + english:
                held = index.held_terms(gid, words)
                own = len(rules[gid] & words) / len(rules[gid]) if rules[gid] else 0.0
                pairs.append((wanted is not None and gid == ids[wanted], wanted is None,
                              bm25.get(gid, 0.0), len(held), max(len(held) / len(words), own),
                              text, len(words)))
    own_pairs = [p for p in pairs if p[0]]
    unrelated = {p[5] for p in pairs if p[1]}

    def line(label: str, passes) -> None:
        missed = sum(not passes(p) for p in own_pairs)
        served = len({p[5] for p in pairs if p[1] and passes(p)})
        other = sum(passes(p) for p in pairs if not p[0])
        print(f"  {label:36} own rule missed {missed:2}/{len(own_pairs)}, unrelated requests "
              f"served {served:2}/{len(unrelated)}, other pairs passing {other}")

    print("BM25 share alone (before):")
    line(f"share >= {MIN_KEYWORD}", lambda p: p[2] >= MIN_KEYWORD)
    print("BM25 share and tokens held (a request of fewer tokens: all of them):")
    for need in (1, 2, 3):
        line(f"share >= {MIN_KEYWORD}, held >= {need}",
             lambda p, need=need: p[2] >= MIN_KEYWORD and p[3] >= min(need, p[6]))
    print("the share of tokens shared alone (experience recall's evidence):")
    for bar in (0.15, 0.2, 0.25, 0.3, 0.4, 0.5):
        line(f"shared >= {bar}", lambda p, bar=bar: p[4] >= bar)
    for bar in (0.1, 0.15, 0.2):
        line(f"share >= {MIN_KEYWORD}, shared >= {bar}",
             lambda p, bar=bar: p[2] >= MIN_KEYWORD and p[4] >= bar)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", action="store_true", help="the evidence of every pair")
    parser.add_argument("--model-dir", default=default_model_dir())
    args = parser.parse_args(argv)
    if args.pairs:
        pair_figures(args.model_dir)
    else:
        figures(args.model_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
