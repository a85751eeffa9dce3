#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""README and docs/ are the project's own: they never point to files a user
does not have (a specification, design or platform page outside the
repository, a developer's machine), and every relative link resolves.

Usage: python3 tests/integration/test_docs.py [--build-dir BUILD] (the build dir is unused)
"""

import glob
import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUTSIDE = re.compile(r'/work/|\bSPEC\b|DESIGN\.md|PLATFORM\.md|shared folder|seed\'s|\bthe seed\b')
LINK = re.compile(r'\]\(([^)#\s]+)(?:#[^)]*)?\)')


def pages():
    return [os.path.join(ROOT, 'README.md')] + sorted(
        glob.glob(os.path.join(ROOT, 'docs', '*.md')) +
        glob.glob(os.path.join(ROOT, 'docs', 'decisions', '*.md')))


class Docs(unittest.TestCase):
    def test_01_no_reference_outside_the_repository(self):
        bad = []
        for p in pages():
            with open(p) as f:
                for n, line in enumerate(f, 1):
                    if OUTSIDE.search(line):
                        bad.append('%s:%d: %s' % (os.path.relpath(p, ROOT), n, line.strip()))
        self.assertEqual(bad, [], '\n'.join(bad))

    def test_02_relative_links_resolve(self):
        bad = []
        for p in pages():
            with open(p) as f:
                text = f.read()
            for target in LINK.findall(text):
                if '://' in target or target.startswith('mailto:'):
                    continue
                if not os.path.exists(os.path.join(os.path.dirname(p), target)):
                    bad.append('%s: %s' % (os.path.relpath(p, ROOT), target))
        self.assertEqual(bad, [], '\n'.join(bad))

    def test_03_behaviour_page_exists_and_is_linked_from_readme(self):
        self.assertTrue(os.path.exists(os.path.join(ROOT, 'docs', 'behaviour.md')))
        with open(os.path.join(ROOT, 'README.md')) as f:
            self.assertIn('docs/behaviour.md', f.read())

    def test_04_every_decision_record_is_in_the_index_with_a_status(self):
        d = os.path.join(ROOT, 'docs', 'decisions')
        with open(os.path.join(d, 'README.md')) as f:
            rows = {m.group(1): m.group(2).strip() for m in re.finditer(
                r'^\| \[\d{4}\]\((\d{4}-[^)]+\.md)\) \|[^|]*\|([^|]*)\|$', f.read(), re.M)}
        records = sorted(x for x in os.listdir(d) if re.match(r'\d{4}-.*\.md$', x))
        self.assertEqual(sorted(rows), records)
        for rec, status in rows.items():
            self.assertRegex(status, r'^(holds|history)', rec)


if __name__ == '__main__':
    argv = [a for i, a in enumerate(sys.argv) if a != '--build-dir' and
            (i == 0 or sys.argv[i - 1] != '--build-dir')]
    unittest.main(argv=argv, verbosity=2)
