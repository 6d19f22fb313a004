"""Experience recall of tasks the model does not read (Japanese, Chinese, Korean, Russian).

    python benchmarks/unread_recall.py           # recall, every request kind, one bank
    python benchmarks/unread_recall.py --pairs   # the evidence of every (request, run) pair

20 runs with feedback in those scripts and the four ordinary runs of hunt-upgrade #2's repro
(English and German) are recorded into a fresh bank with the real MiniLM model. Each run is asked
for with its own task, a paraphrase, the task and a sentence more, and (16 of them) the words of
its feedback; 20 requests about other tasks should recall nothing. `recall(k=3, min_score=0)`.
First, the repro's own setting: each run alone among the four read runs, asked for by its task.
Written by hand for hunt-upgrade #2 (session 23): a small set, to compare versions, not to
quote as a rate.

`--pairs` prints, for every request and every run, the evidence `recall.MIN_SHARED_TOKENS` is
compared with (the share of the request's tokens the run's keyword text holds, or of the run's
task's tokens the request holds, the larger), and how many pairs each bar lets through.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HitTally, default_model_dir  # noqa: E402

#: (task, feedback, paraphrase, words of its feedback or None)
RUNS = [
    ("リリースノートを日本語に翻訳する", "敬語を使ってください。技術用語は英語のままにしてください。",
     "リリースノートの日本語訳を作る", "敬語を使う"),
    ("ユーザーテーブルを新しいスキーマに移行する",
     "移行前にテーブルをロックするのを忘れて、書き込みが失われた。次回は必ずバックアップを取ってから実行すること。",
     "ユーザーテーブルのスキーマ移行", "テーブルをロックする"),
    ("決済サービスのAPIキーをローテーションする",
     "すべてのサービスが設定を再読み込みした後で古いキーを無効にすること。早すぎると決済が止まる。",
     "決済サービスのAPIキーを入れ替える", "古いキーを無効にする"),
    ("ログイン画面のバグを修正する",
     "セッションの有効期限が切れた時にエラーが表示されなかった。再現テストを追加してから直した。",
     "ログイン画面の不具合を直す", None),
    ("週次レポートをメールで送信する",
     "添付ファイルのサイズが大きすぎて送信に失敗した。共有フォルダのリンクを送る方が良い。",
     "週次レポートをメール送信", "添付ファイルが大きすぎる"),
    ("迁移用户表到新的数据库", "迁移前没有锁表，导致部分写入丢失。下次先备份再执行，并在低峰期操作。",
     "把用户表迁移到新数据库", None),
    ("修复支付接口的超时问题", "超时是因为连接池太小，调大之后恢复正常。记得加上监控和告警。",
     "解决支付接口超时", "连接池太小"),
    ("为订单服务编写单元测试", "覆盖率从百分之四十提高到百分之八十，模拟外部依赖时要小心，不要模拟数据库。",
     "给订单服务写单元测试", None),
    ("部署新版本到生产环境", "部署前要通知运维团队，并准备回滚方案。这次回滚花了二十分钟。",
     "把新版本发布到生产环境", "准备回滚方案"),
    ("사용자 테이블을 새 스키마로 마이그레이션하기",
     "마이그레이션 전에 테이블을 잠그지 않아서 쓰기가 손실되었습니다. 다음에는 백업을 먼저 하세요.",
     "사용자 테이블 스키마 마이그레이션", None),
    ("社内wikiの検索機能を改善する",
     "全文検索のインデックスが古かった。毎晩再構築するジョブを追加したら、検索結果が正しくなった。",
     "社内wikiの検索を良くする", "インデックスを毎晩再構築する"),
    ("顧客データをCSVでエクスポートする", "文字コードをUTF-8にしないとExcelで文字化けする。BOM付きで出力すること。",
     "顧客データのCSV出力", "Excelで文字化けする"),
    ("請求書のPDFを自動生成する",
     "フォントが埋め込まれていなかったので、一部の環境で表示が崩れた。フォントを同梱して解決した。",
     "請求書PDFの自動作成", "フォントを埋め込む"),
    ("本番データベースのバックアップを復元する",
     "復元に三時間かかった。事前に手順書を確認し、検証環境で練習しておくべきだった。",
     "本番DBのバックアップから復元", "検証環境で練習する"),
    ("给移动应用添加推送通知", "安卓和苹果的推送证书要分别配置，证书过期会导致推送全部失败。",
     "为手机应用加上推送通知", "推送证书过期"),
    ("重构购物车模块的代码", "先补齐测试再重构，避免改坏结算逻辑。拆分成三个小的提交更容易审查。",
     "重写购物车模块", "拆分成小的提交"),
    ("分析上个月的用户流失数据", "流失主要集中在注册后第一周，新手引导需要改进。数据里有重复账号要先去重。",
     "分析上月用户流失", "重复账号要先去重"),
    ("配置网站的HTTPS证书", "证书链不完整导致部分浏览器报错，要把中间证书也一起配置。",
     "给网站配置HTTPS", "中间证书"),
    ("Обновить зависимости проекта до последних версий",
     "После обновления сломались тесты сериализации. Обновлять по одной библиотеке и запускать тесты.",
     "Обновить зависимости проекта", "сломались тесты сериализации"),
    ("Написать документацию для публичного API",
     "Примеры запросов важнее длинных описаний. Проверять каждый пример в песочнице.",
     "Документация публичного API", "примеры запросов"),
]
#: A sentence more after the task, in its language ("... so tell me what to watch out for").
MORE = {"ja": "。来週のリリースまでに終わらせたいので、注意点を教えてください。",
        "zh": "，这次需要在周末完成，请告诉我要注意什么。",
        "ko": ". 이번 주말까지 끝내야 하는데 주의할 점을 알려 주세요.",
        "ru": " — нужно закончить к пятнице, на что обратить внимание?"}


def _language(text: str) -> str:
    if any("\u3040" <= ch <= "\u30ff" for ch in text):
        return "ja"
    if any("\uac00" <= ch <= "\ud7af" for ch in text):
        return "ko"
    return "ru" if any("\u0400" <= ch <= "\u04ff" for ch in text) else "zh"
UNRELATED = [
    "データベースのインデックスを再構築する", "新入社員のオンボーディング資料を作成する", "画像のサイズを一括で変更する",
    "サーバーの証明書を更新する", "会議の議事録をまとめる", "优化首页的加载速度", "编写新功能的产品文档",
    "清理日志文件释放磁盘空间", "设置每日自动备份", "고객 문의 메일에 답장하기", "チームの飲み会の場所を予約する",
    "プリンターのトナーを交換する", "ネットワークの遅延を調査する", "年末調整の書類を提出する", "给新员工开通邮箱账号",
    "统计本季度的销售额", "修改登录页面的配色", "翻译用户手册为英文", "Настроить резервное копирование сервера",
    "Подготовить презентацию для клиента",
]
#: The four ordinary runs of the repro (`ja_recall4.py`): English and German, read by the model.
READ_RUNS = [
    dict(task="Migrate the users table to the new schema", outcome="failure",
         feedback="Forgot to lock the table; writes were lost.",
         lessons=["Lock the table before migrating."], tags=["database"]),
    dict(task="Migrate the orders table", outcome="success",
         feedback="Took a backup first and ran in a transaction. Worked well."),
    dict(task="Übersetze die Release-Notes ins Deutsche", outcome="success",
         feedback="Bitte immer die Sie-Form verwenden. Umlaute nicht ersetzen (ä, ö, ü, ß)."),
    dict(task="Rotate the API keys for the payment service", outcome="success",
         feedback="Revoke the old keys only after every service reloads."),
]


def requests() -> list[tuple[str, str, int | None]]:
    """(kind, request, index of the run it asks for, None for an unrelated request)."""
    out: list[tuple[str, str, int | None]] = []
    for n, (task, _feedback, paraphrase, words) in enumerate(RUNS):
        out += [("own", task, n), ("paraphrase", paraphrase, n), ("task+more", task + MORE[_language(task)], n)]
        if words:
            out.append(("feedback words", words, n))
    return out + [("unrelated", text, None) for text in UNRELATED]


def among_read_runs(model_dir: str | None) -> None:
    """The repro's setting for each run: a bank of the four read runs and this one run."""
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding

    embedding = MiniLMEmbedding(model_dir=model_dir)
    found = 0
    for task, feedback, _paraphrase, _words in RUNS:
        with tempfile.TemporaryDirectory(prefix="unread-recall-") as root, Skillbank.open(
                root, embedding_function=embedding, include_bundled=False) as bank:
            for run in READ_RUNS:
                bank.experiences.record(**run)
            run_id = bank.experiences.record(task=task, outcome="partial", feedback=feedback)
            got = [h.id for h in bank.experiences.recall(task, k=3, count_use=False, min_score=0)]
            found += bool(got) and got[0] == run_id
            if not got or got[0] != run_id:
                print(f"  not found first: {task}")
    print(f"each run among the four read runs, recalled first by its own task: "
          f"{found}/{len(RUNS)}")


def recall_figures(model_dir: str | None) -> None:
    from skillbank import Skillbank
    from skillbank.embeddings import MiniLMEmbedding

    among_read_runs(model_dir)
    with tempfile.TemporaryDirectory(prefix="unread-recall-") as root, Skillbank.open(
            root, embedding_function=MiniLMEmbedding(model_dir=model_dir),
            include_bundled=False) as bank:
        for run in READ_RUNS:
            bank.experiences.record(**run)
        ids = [bank.experiences.record(task=task, outcome="partial", feedback=feedback)
               for task, feedback, _paraphrase, _words in RUNS]
        tally = HitTally()
        for kind, text, wanted in requests():
            got = [h.id for h in bank.experiences.recall(text, k=3, count_use=False, min_score=0)]
            if not tally.add((kind,), got, None if wanted is None else ids[wanted]) \
                    and wanted is not None:
                print(f"  not found ({kind}): {text}")
    tally.print([("request", 16)], "other runs returned", "requests recalled something")


def pair_figures() -> None:
    """The evidence of every pair, as `RecallMixin._unread_evidence` computes it (the keyword
    text of a run here is its task and feedback: what `indexing.keyword_text` holds besides the
    outcome)."""
    from skillbank.keyword import tokenize

    def share(part: str, whole: str) -> float:
        tokens = set(tokenize(part))
        return len(tokens & set(tokenize(whole))) / len(tokens) if tokens else 0.0

    own, other = [], []
    for kind, text, wanted in requests():
        for n, (task, feedback, _paraphrase, _words) in enumerate(RUNS):
            value = max(share(text, f"{task}\n{feedback}"), share(task, text))
            (own if n == wanted else other).append((value, kind, text, task))
    own.sort()
    other.sort(reverse=True)
    print("lowest, a request and its own run:")
    for value, kind, text, _task in own[:4]:
        print(f"  {value:.2f} {kind}: {text}")
    print("highest, a request and another run:")
    for value, kind, text, task in other[:6]:
        print(f"  {value:.2f} {kind}: {text} -> {task}")
    for bar in (0.3, 0.4, 0.5, 0.6, 0.7):
        missed = sum(value < bar for value, *_ in own)
        passed = sum(value >= bar for value, *_ in other)
        print(f"bar {bar}: own run missed {missed}/{len(own)}, another run passed "
              f"{passed}/{len(other)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", action="store_true", help="the evidence of every pair")
    parser.add_argument("--model-dir", default=default_model_dir())
    args = parser.parse_args(argv)
    if args.pairs:
        pair_figures()
    else:
        recall_figures(args.model_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
