"""Private scores against the public MTEB leaderboard (`compare`, the report's public section): where
public scores come from (results folder, mteb cache, the shipped snapshot), the kept comparison, its plot."""
