"""The layer-read progress display: visible only on a terminal, silent otherwise, never on stdout."""

from __future__ import annotations

import io
import threading

from imgcheck.formats.progress import LayerProgress, RichLayerProgress

DIGEST = "sha256:fd5e8675fe85edaa14cccc3c14ccc90a0877be276736fd38817a9ddcc84c1625"


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _read_one_layer(progress: LayerProgress) -> None:
    with progress:
        progress.layer_started(DIGEST, 3 * 1024 * 1024)
        for _ in range(3):
            progress.layer_bytes(DIGEST, 1024 * 1024)
        progress.layer_finished(DIGEST)


def test_silent_when_stderr_is_not_a_tty(capsys):
    stream = io.StringIO()
    progress = LayerProgress.for_terminal(stream=stream)
    assert not progress.enabled
    _read_one_layer(progress)
    assert stream.getvalue() == ""
    assert capsys.readouterr() == ("", "")


def test_silent_with_quiet_even_on_a_tty(capsys):
    stream = FakeTty()
    progress = LayerProgress.for_terminal(quiet=True, stream=stream)
    assert not progress.enabled
    _read_one_layer(progress)
    assert stream.getvalue() == ""
    assert capsys.readouterr() == ("", "")


def test_silent_on_a_dumb_terminal(monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    stream = FakeTty()
    _read_one_layer(LayerProgress.for_terminal(stream=stream))
    assert stream.getvalue() == ""


def test_default_stream_is_stderr_and_pytest_capture_is_not_a_tty(capsys):
    # under pytest's capture stderr is not a terminal, which is the CI situation
    assert not LayerProgress.for_terminal().enabled


def test_draws_on_a_terminal_and_never_on_stdout(capsys, monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    stream = FakeTty()
    progress = LayerProgress.for_terminal(stream=stream)
    assert isinstance(progress, RichLayerProgress)
    _read_one_layer(progress)
    drawn = stream.getvalue()
    assert "layer fd5e8675fe85" in drawn  # the layer's short digest was shown while reading
    assert capsys.readouterr().out == ""


def test_unknown_sizes_and_unknown_layers_are_harmless(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    stream = FakeTty()
    with LayerProgress.for_terminal(stream=stream) as progress:
        progress.layer_bytes("sha256:never-started", 10)  # ignored, no exception
        progress.layer_started(DIGEST, None)
        progress.layer_bytes(DIGEST, 10)
        progress.layer_finished(DIGEST)
        progress.layer_finished(DIGEST)  # twice: ignored


def test_threads_can_report_concurrently(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    stream = FakeTty()
    progress = LayerProgress.for_terminal(stream=stream)

    def read(i: int) -> None:
        digest = f"sha256:{i:064x}"
        progress.layer_started(digest, 1000)
        for _ in range(100):
            progress.layer_bytes(digest, 10)
        progress.layer_finished(digest)

    with progress:
        threads = [threading.Thread(target=read, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert progress.layers_done == 8
