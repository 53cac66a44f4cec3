"""What every visitor's browser loads before the first row (issue 32's first-row step).

Gradio loads the frontend module of every component type in the page's config when the page
starts, whatever tab the component sits on: a type used only on a tab the visitor has not
opened still costs its script on the landing page.  The model page's copyable recipe is a
fenced block in a Markdown (:class:`~leaderboard.ui.common.CodeBlock`), not a ``gr.Code``, whose
editor (CodeMirror) was about a quarter of the landing page's script.
"""

from __future__ import annotations

from pathlib import Path

from leaderboard.ui.common import CodeBlock, to_update
from leaderboard.ui.layout import build_app
from tests.ui.store import sample_app_context

#: Component types whose frontend module is heavy and which no tab needs: the code editor.
HEAVY_UNNEEDED = {"code"}


def test_the_page_config_has_no_code_editor(tmp_path: Path) -> None:
    config = build_app(sample_app_context(tmp_path)).get_config_file()
    types = {component["type"] for component in config["components"]}
    assert "markdown" in types and "dataframe" in types  # the config is the page's, read as gradio sends it
    assert not types & HEAVY_UNNEEDED


def test_a_code_block_is_a_fence_its_text_cannot_close() -> None:
    script = "echo ```\necho `one` ````four````\nlm_eval run --model hf"
    shown = CodeBlock(script).markdown()
    lines = shown.splitlines()
    assert lines[0] == "`````shell" and lines[-1] == "`````"  # longer than the text's longest run (4)
    assert "\n".join(lines[1:-1]) == script


def test_a_plain_script_gets_a_three_backtick_fence_and_is_what_the_markdown_shows() -> None:
    block = CodeBlock("pip install x\nlm_eval run")
    assert block.markdown() == "```shell\npip install x\nlm_eval run\n```"
    assert to_update(None, block) == block.markdown()  # type: ignore[arg-type]  # the component is not read
