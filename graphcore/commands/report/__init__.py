"""``graphtool report``: one self-contained HTML page about a spec.

- ``artifacts``: the other commands' files (run.json, bench.json, ir*.txt, train.csv) checked
  before the page uses them: size, UTF-8, JSON with each value's line and column, types, rows;
- ``page``: the page: inline CSS, SVG and script; every value through one escaping function
  or as a checked number; a CSP that runs only the page's own script.
"""
