#!/usr/bin/env python3
"""Man pages and bash completion for gpuprof, generated from the built binary's --help.

usage: gen_cli_docs.py GPUPROF VERSION MANDIR COMPLETION_FILE

Runs `GPUPROF --help` (the command table: the "commands:" block) and `GPUPROF <cmd> --help` for
each command, and turns that text into MANDIR/gpuprof.1, MANDIR/gpuprof-<cmd>.1 and a bash
completion script. Nothing here repeats the help text: a new command or option gets its page and
its completion from the next build. The layout rules (docs/internals/install.md):

  usage: ...            first line, with its indented continuation lines -> SYNOPSIS
  NAME:                 a line of its own at column 0 ("options:") -> a section (.SH NAME)
  exit status: / exit code: ...   -> EXIT STATUS (with its continuation lines)
    -x, --long ARG  text          an indented line starting with '-' -> an option (.TP); lines
                                  indented to its text column continue it
    other indented lines          kept as they are (.nf), e.g. tables of routes or suffixes
  other lines           running text; a blank line ends a paragraph
"""
import os
import re
import subprocess
import sys

OPTION_RE = re.compile(r"^\s+-")


def run_help(exe, *args):
    """stdout of `exe args... --help`; fails loudly when the command does not answer."""
    res = subprocess.run([exe, *args, "--help"], capture_output=True, text=True, check=False)
    if res.returncode != 0 or not res.stdout.strip():
        sys.exit(f"gen_cli_docs: `{exe} {' '.join(args)} --help` failed (exit {res.returncode})")
    return res.stdout


def commands_of(main_help):
    """[(name, summary)] from the "commands:" block of `gpuprof --help`."""
    out, inside = [], False
    for line in main_help.splitlines():
        if line.strip() == "commands:":
            inside = True
        elif inside and re.match(r"^\s+\S", line):
            name, _, summary = line.strip().partition(" ")
            out.append((name, summary.strip()))
        elif inside:
            break
    if not out:
        sys.exit("gen_cli_docs: no \"commands:\" block in gpuprof --help")
    return out


def esc(text):
    """roff-escaped text: backslashes, hyphens (so options copy as ASCII) and leading dots."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text)


def split_usage(lines):
    """(synopsis lines, remaining lines): the 'usage:' line and its indented continuations."""
    if not lines or not lines[0].startswith("usage:"):
        return [], lines
    syn = [lines[0][len("usage:"):].strip()]
    i = 1
    while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():
        syn.append(lines[i].strip())
        i += 1
    return syn, lines[i:]


def text_column(block):
    """The column where the descriptions of an option block start (the most common one)."""
    counts = {}
    for line in block:
        m = re.match(r"^(\s+-\S*(?: \S+)*?)\s{2,}\S", line)
        if m:
            col = len(line) - len(line[m.end() - 1:])
            counts[col] = counts.get(col, 0) + 1
    return max(counts, key=lambda c: (counts[c], -c)) if counts else 0


def option_items(block):
    """[(spec, text)] of an option block (lines starting with '-' and their continuations)."""
    col = text_column(block)
    items = []
    for line in block:
        indent = len(line) - len(line.lstrip())
        if OPTION_RE.match(line) and not (items and col and indent >= col):
            if col and len(line) > col and line[col - 1] == " " and line[col] != " ":
                spec, text = line[:col].strip(), line[col:].strip()
            else:
                spec, _, text = line.strip().partition("  ")
            items.append([spec.strip(), text.strip()])
        elif items:
            items[-1][1] += " " + line.strip()
    return items


def indented_to_roff(block):
    """roff for a block of indented lines: a two-column list (a word, two spaces, its text: the
    command table, a table of routes) as tagged paragraphs, anything else as it is (.nf)."""
    rows = [re.match(r"^\s+(\S+)\s{2,}(\S.*)$", line) for line in block]
    if all(rows):
        out = []
        for m in rows:
            out += [".TP", "\\fB" + esc(m.group(1)) + "\\fR", esc(m.group(2))]
        return out
    return [".nf"] + [esc(line) for line in block] + [".fi"]


def body_to_roff(lines):
    """roff for the help text after the usage lines."""
    out, para, i = [], [], 0

    def flush():
        if para:
            out.append(esc(" ".join(para)))
            para.clear()

    while i < len(lines):
        line = lines[i]
        header = re.match(r"^([A-Za-z][A-Za-z ]*):$", line)
        exit_m = re.match(r"^(exit status|exit code):\s*(.*)$", line, re.IGNORECASE)
        if not line.strip():
            flush()
            out.append(".PP")
            i += 1
        elif header:
            flush()
            out.append(f'.SH "{header.group(1).upper()}"')
            i += 1
        elif exit_m:
            flush()
            out += ['.SH "EXIT STATUS"', esc(exit_m.group(2))]
            i += 1
            while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():
                out += [".br", esc(lines[i].strip())]
                i += 1
        elif OPTION_RE.match(line):
            flush()
            block = [line]
            i += 1
            while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():
                block.append(lines[i])
                i += 1
            if '.SH "OPTIONS"' not in out:
                out.append('.SH "OPTIONS"')
            for spec, text in option_items(block):
                out += [".TP", "\\fB" + esc(spec) + "\\fR", esc(text)]
        elif line.startswith(" "):
            flush()
            block = []
            while i < len(lines) and lines[i].startswith(" ") and not OPTION_RE.match(lines[i]):
                block.append(lines[i])
                i += 1
            out += indented_to_roff(block)
        else:
            para.append(line.strip())
            i += 1
    flush()
    # No empty paragraphs: a .PP straight after a section heading or another .PP says nothing.
    clean = []
    for line in out:
        if line == "" or (line == ".PP" and (not clean or clean[-1] == ".PP"
                                            or clean[-1].startswith(".SH"))):
            continue
        clean.append(line)
    while clean and clean[-1] == ".PP":
        clean.pop()
    return clean


def page(name, summary, version, help_text, extra=()):
    """A whole man page (section 1) for the program or subcommand NAME."""
    syn, rest = split_usage(help_text.rstrip("\n").splitlines())
    head = [f'.TH "{name.upper()}" "1" "" "gpuprof {version}" "gpuprof manual"',
            ".\\\" Generated by cmake/gen_cli_docs.py from `" + name.replace("-", " ", 1) +
            " --help`: edit the help text, not this file.",
            ".SH NAME", f"{esc(name)} \\- {esc(summary)}", ".SH SYNOPSIS", ".nf"]
    head += ["\\fB" + esc(s.split(" ", 1)[0]) + "\\fR" +
             (" " + esc(s.split(" ", 1)[1]) if " " in s else "") for s in syn]
    head += [".fi", ".SH DESCRIPTION"]
    body = body_to_roff(rest)
    if body and body[0].startswith(".SH"):
        head.pop()
    return "\n".join(head + body + list(extra)) + "\n"


def see_also(names):
    """A SEE ALSO section naming the given pages."""
    refs = [f"\\fB{esc(n)}\\fR(1)" for n in names]
    return [".SH \"SEE ALSO\"", ",\n".join(refs)]


def options_of(help_text):
    """Every option word (-x, --long) of a command's help text, in order, without repeats."""
    found, block = [], []
    for line in help_text.splitlines() + [""]:
        if OPTION_RE.match(line) or (block and line.startswith(" ") and line.strip()):
            block.append(line)
            continue
        for spec, _ in option_items(block):
            for word in re.findall(r"(?:^|[\s,|\[])(--?[A-Za-z0-9][A-Za-z0-9-]*)", spec):
                if word not in found:
                    found.append(word)
        block = []
    return found


def completion(cmds):
    """The bash completion script: commands first, then each command's options."""
    names = " ".join(c for c, _ in cmds)
    cases = "\n".join(f'        {c}) opts="{" ".join(o)}" ;;' for c, o in cmds)
    return f"""# bash completion for gpuprof. Generated by cmake/gen_cli_docs.py from `gpuprof --help` and
# `gpuprof <command> --help`: edit the help text, not this file.
_gpuprof() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} opts="" i
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{names} --help --version" -- "$cur"))
        return
    fi
    # After `--` (gpuprof trace -- ./app ...) the words belong to the program: complete files.
    for ((i = 2; i < COMP_CWORD; i++)); do
        [ "${{COMP_WORDS[i]}}" = "--" ] && return
    done
    case "${{COMP_WORDS[1]}}" in
{cases}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    fi
    # Anything else (inputs, option values) falls back to file names (complete -o default).
}}
complete -o default -F _gpuprof gpuprof
"""


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.splitlines()[2])
    exe, version, mandir, comp_file = sys.argv[1:]
    main_help = run_help(exe)
    cmds = commands_of(main_help)
    os.makedirs(mandir, exist_ok=True)
    pages = {"gpuprof.1"}
    helps = {}
    for name, summary in cmds:
        helps[name] = run_help(exe, name)
        text = page(f"gpuprof-{name}", summary, version, helps[name], see_also(["gpuprof"]))
        pages.add(f"gpuprof-{name}.1")
        with open(os.path.join(mandir, f"gpuprof-{name}.1"), "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(mandir, "gpuprof.1"), "w", encoding="utf-8") as f:
        f.write(page("gpuprof", "GPU profiling toolkit", version, main_help,
                     see_also([f"gpuprof-{c}" for c, _ in cmds])))
    # Pages of commands that no longer exist go.
    for old in os.listdir(mandir):
        if old.endswith(".1") and old not in pages:
            os.remove(os.path.join(mandir, old))
    os.makedirs(os.path.dirname(os.path.abspath(comp_file)), exist_ok=True)
    with open(comp_file, "w", encoding="utf-8") as f:
        f.write(completion([(c, options_of(helps[c])) for c, _ in cmds]))


if __name__ == "__main__":
    main()
