"""Tiny generated corpora shared by the tests."""

from __future__ import annotations

import random
from pathlib import Path

ANIMALS = ["犬", "猫", "馬", "牛", "羊", "豚", "鳥", "熊", "狐", "狸", "兎", "猿", "鹿", "象", "虎", "獅子",
           "キリン", "パンダ", "ライオン", "ゴリラ"]
VEHICLES = ["車", "電車", "バス", "船", "飛行機", "自転車", "トラック", "バイク", "新幹線", "タクシー", "ヘリ",
            "地下鉄", "フェリー", "ロケット", "戦車", "救急車", "消防車", "パトカー", "モノレール", "カート"]


def two_group_corpus(path: Path, lines: int = 300, seed: int = 0) -> Path:
    """Each line draws 6-10 words from one group only (alternating groups)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(lines):
            group = ANIMALS if i % 2 == 0 else VEHICLES
            fh.write(" ".join(rng.choice(group) for _ in range(rng.randint(6, 10))) + "\n")
    return path
