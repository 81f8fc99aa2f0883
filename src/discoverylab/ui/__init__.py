"""Browser UI for human scientists: play (`discoverylab serve`), replay logs, make videos.

The server (`ui.server`) is a thin FastAPI layer over `ui.games` (human games, logged step by
step in the `discoverylab run` JSONL format), `ui.replay` (re-simulating any run log),
`ui.video` (GIF/MP4 of a replay) and `ui.leaderboard` (human vs agent scores over a folder).
"""
