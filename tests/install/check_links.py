#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The links between the project's Markdown files lead somewhere.

    check_links.py REPO

Every relative link [text](path#anchor) of a committed *.md file names a
file of the repository, and its anchor one of that file's headings (as
GitHub makes them: lower case, punctuation dropped, spaces to '-').
Links to the web are not fetched.  Issue 32 moved the README's sections
into docs/: this keeps the pointers between them true.
"""
import os
import re
import subprocess
import sys

repo = sys.argv[1]
git = subprocess.run(['git', '-C', repo, 'ls-files', '*.md'], capture_output=True, text=True)
if git.returncode == 0:
    files = git.stdout.split()
else:  # a source tarball (the Debian build): the tree's own files
    files = sorted(os.path.relpath(os.path.join(d, f), repo)
                   for d, dirs, names in os.walk(repo)
                   for f in names if f.endswith('.md')
                   if not os.path.relpath(d, repo).startswith(('build', 'obj-', 'debian', '.git')))
link = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)
    return s.replace(' ', '-')


def anchors(path):
    out, fence = set(), False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('```'):
                fence = not fence
            elif not fence and re.match(r'#{1,6} ', line):
                out.add(slug(line.lstrip('#')))
    return out


bad = 0
for md in files:
    fence = False
    with open(os.path.join(repo, md), encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            if line.startswith('```'):
                fence = not fence
            if fence:
                continue
            for target in link.findall(re.sub(r'`[^`]*`', '', line)):
                if re.match(r'[a-z]+:', target):
                    continue
                path, _, anchor = target.partition('#')
                dest = os.path.normpath(os.path.join(repo, os.path.dirname(md), path)) if path else os.path.join(repo, md)
                if not os.path.exists(dest):
                    print(f'{md}:{n}: {target}: no such file')
                    bad += 1
                elif anchor and dest.endswith('.md') and anchor not in anchors(dest):
                    print(f'{md}:{n}: {target}: no heading #{anchor}')
                    bad += 1
print(f'check_links: {len(files)} files, {bad} broken links')
sys.exit(1 if bad else 0)
