#!/usr/bin/env python3
"""Man pages and bash completion for CAIRN's binaries, generated from their --help.

usage: help_pages.py man BINARY OUT.1        a man page: BINARY --help, then the --help
                                            of each command it lists
       help_pages.py completion BINARY OUT   a bash completion script: the commands, and
                                            each command's flags as its --help spells them

`make install` runs both for cairn, cairn-farm and cairn-agent, so the pages and the
completion never drift from the binaries (tests/build/test_install.py checks them)."""
import os
import re
import subprocess
import sys


def help_text(binary, *args):
    r = subprocess.run([binary, *args, "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f"help_pages: {binary} {' '.join(args)} --help exited {r.returncode}")
    return r.stdout


def commands(top):
    """The commands (or verbs) a top-level --help lists, in its order."""
    names, inside = [], False
    for line in top.splitlines():
        if re.fullmatch(r"(commands|verbs):", line.strip()):
            inside = True
        elif inside and not line.strip():
            break
        elif inside and re.match(r"  [a-z][\w-]*\s", line):
            names.append(line.split()[0])
    return [n for n in names if n != "help"]


def roff(text):
    """Preformatted text made safe for roff: backslashes, and lines starting with . or '."""
    out = []
    for line in text.rstrip("\n").splitlines():
        line = line.replace("\\", "\\e")
        out.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(out)


def man_page(binary, out):
    name = os.path.basename(binary)
    top = help_text(binary)
    summary = top.splitlines()[0].split(": ", 1)[-1] if top else name
    parts = [f'.TH {name.upper()} 1 "" "{name} {version(binary)}" "CAIRN"',
             ".SH NAME", f"{name} \\- {roff(summary)}", ".SH SYNOPSIS", ".nf", roff(top), ".fi"]
    for command in commands(top):
        parts += [f".SH {name.upper()} {command.upper()}", ".nf", roff(help_text(binary, command)),
                  ".fi"]
    parts += [".SH SEE ALSO", "The docs/ folder of the CAIRN sources: tutorial.md, language.md, "
              "tools.md, farm.md."]
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


def version(binary):
    r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    words = r.stdout.split()
    return words[1] if len(words) > 1 else ""


def completion(binary, out):
    name = os.path.basename(binary)
    func = "_" + re.sub(r"\W", "_", name) + "_complete"
    top = help_text(binary)
    cmds = commands(top)
    cases = []
    for command in cmds:
        text = help_text(binary, command)  # --fmad=false is nvcc's flag, named in a help
        flags = sorted(set(re.findall(r"(?<![\w-])(--[a-z][\w-]*(?![\w=-])|-[a-zA-Z]\d?(?![\w-]))",
                                      text)))
        cases.append(f'        {command}) words="{" ".join(flags)}" ;;')
    script = f"""# bash completion for {name}, generated from its --help by scripts/help_pages.py
{func}() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} words
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{' '.join(cmds + ['help', '--help', '--version'])}" -- "$cur"))
        return
    fi
    case ${{COMP_WORDS[1]}} in
{chr(10).join(cases)}
        help) words="{' '.join(cmds)}" ;;
        *) words="" ;;
    esac
    if [[ $cur == -* || ${{COMP_WORDS[1]}} == help ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -F {func} {name}
"""
    with open(out, "w") as f:
        f.write(script)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("man", "completion"):
        sys.exit(__doc__)
    (man_page if sys.argv[1] == "man" else completion)(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
