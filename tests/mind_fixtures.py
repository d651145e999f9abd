"""Three hand-written posts shared by the workload and release tests (segmentation and pairing by hand)."""

from __future__ import annotations

from tefcore.mind.load import Label, Post

ECO_C = Label("Economy", "Economic Models", "Free-Market", "change")
ECO_S = Label("Economy", "Economic Models", "Interventionist", "stability")
POL_C = Label("Politics", "Policy Orientations", "Revolutionism", "change")


def posts() -> list[Post]:
    return [
        # reference rule: "Markets decide prices." and "Taxes should fall now." kept, "Why?" dropped
        Post("en-single-1", "en", "COL", "Why? Markets decide prices. Taxes should fall now.", (ECO_C, POL_C)),
        # two-sided in Economy: excluded, so no pair
        Post("en-single-2", "en", "COL", "The state must plan the economy.", (ECO_C, ECO_S)),
        Post("zh-single-3", "zh", "COL", "市场应该决定价格和资源配置。政府不应过多干预经济运行。", (ECO_C,)),
    ]
