"""CLI inputs that passed silently or said the wrong thing: each exits 2 with a message that names the cause."""

from __future__ import annotations

import json
import os

import pytest

from ._support import wai, write_rows


@pytest.fixture
def src(tmp_path):
    return write_rows(tmp_path / "rows.jsonl")


def test_inputs_export_unknown_suffix_errors(tmp_path, src, capsys, monkeypatch):
    for command in (["export", src], ["select", src, "--mode", "rl"],
                    ["decontaminate", src, "--eval", write_rows(tmp_path / "ev.jsonl", [{"prompt": "zzz"}])]):
        result = wai(capsys, monkeypatch, *command, "-o", tmp_path / "x.csv")
        assert result.code == 2, result
        assert result.err.startswith("error: output must end in .jsonl") and "x.csv" in result.err
        assert not (tmp_path / "x.csv").exists()


def test_inputs_decontaminate_unknown_field_errors(tmp_path, src, capsys, monkeypatch):
    ev = write_rows(tmp_path / "ev.jsonl", [{"scenario_id": "e", "prompt": "an unrelated question"}])
    result = wai(capsys, monkeypatch, "decontaminate", src, "--eval", ev, "--field", "nope", "-o", tmp_path / "c.jsonl")
    assert result.code == 2
    assert "fields must name text fields the training rows have, got 'nope'" in result.err and "prompt" in result.err
    assert not (tmp_path / "c.jsonl").exists()


def test_inputs_pass_at_on_an_empty_file_exits_nonzero(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = wai(capsys, monkeypatch, "pass-at", empty)
    assert result.code == 2
    assert result.err.startswith("error: file") and "got no rows" in result.err
    result = wai(capsys, monkeypatch, "pass-at", "-", stdin="")
    assert result.code == 2 and "stdin must hold graded rollouts" in result.err


def test_inputs_unreadable_input_file_exits_2(tmp_path, capsys, monkeypatch):
    """A file whose read fails at the OS level (EIO, or EACCES when not root) is a WaiError, not a traceback."""
    if os.geteuid() == 0:
        bad = tmp_path / "rows.jsonl"
        bad.symlink_to("/proc/self/mem")  # exists, opens, and every read at offset 0 fails with EIO, even for root
        reason = "Input/output error"
    else:
        bad = write_rows(tmp_path / "rows.jsonl")
        bad.chmod(0)
        reason = "Permission denied"
    for command in (["pass-at", bad], ["export", bad, "-o", tmp_path / "t.jsonl"]):
        result = wai(capsys, monkeypatch, *command)
        assert result.code == 2, result
        assert f"cannot be read ({reason})" in result.err and "Traceback" not in result.err


def test_inputs_undecodable_label_file_exits_2(tmp_path, src, capsys, monkeypatch):
    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(b'{"key": "t0#0", "label": 1}\n\xff\xfe\x00bad\n')
    result = wai(capsys, monkeypatch, "judge-trust", src, "--labels", labels)
    assert result.code == 2
    assert "labels file" in result.err and "must be UTF-8 JSONL" in result.err
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"key": "t0#0", "label": 1}\n{not json\n')
    result = wai(capsys, monkeypatch, "judge-trust", src, "--labels", broken)
    assert result.code == 2 and "line 2 must be one JSON record" in result.err


def test_inputs_select_sft_target_0_says_what_0_means(src, tmp_path, capsys, monkeypatch):
    result = wai(capsys, monkeypatch, "select", src, "--mode", "sft", "--target", "0", "-o", tmp_path / "s.jsonl")
    assert result.code == 2
    assert "got None" not in result.err and "--target must be at least 1 with --mode sft" in result.err


def test_inputs_compare_against_an_empty_file_says_it_is_empty(src, tmp_path, capsys, monkeypatch):
    empty = tmp_path / "after.jsonl"
    empty.write_text("")
    result = wai(capsys, monkeypatch, "compare", src, empty)
    assert "grade both arms first" not in result.out
    assert "the after side holds no rows" in result.out


def test_inputs_select_sft_without_completions_names_the_junk_rule(tmp_path, capsys, monkeypatch):
    bare = write_rows(tmp_path / "bare.jsonl", [{"scenario_id": f"t{i}", "rollout_index": 0, "reward": 1.0,
                                                  "prompt": f"question {i}"} for i in range(3)])
    result = wai(capsys, monkeypatch, "select", bare, "--mode", "sft", "-o", tmp_path / "s.jsonl")
    assert result.code == 2
    assert "best reward" not in result.err and "junk" in result.err and "completion" in result.err


def test_inputs_stream_cut_mid_body_says_the_reply_was_cut():
    """A server that sends headers and half a body, then closes: not a timeout."""
    import socket
    import threading

    import whileai as wai_pkg
    from whileai.errors import EndpointError

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"
                         + json.dumps({"choices": []}).encode()[:10])
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        ep = wai_pkg.Endpoint("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, backoff_s=0.001, timeout=1.5)
        with pytest.raises(EndpointError) as info:
            ep.chat([{"role": "user", "content": "hi"}])
    finally:
        stop.set()
        thread.join(5)
        listener.close()
    text = str(info.value)
    assert "must answer within" not in text and "closed the connection mid-reply" in text and "2 times" in text
