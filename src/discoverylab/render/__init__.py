"""Rendering beside the engine: the sprite atlas and the renderer (Pillow). Imports `world`, never the reverse."""
