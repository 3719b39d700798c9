#!/usr/bin/env python3
"""Checks touchstone's reports from outside, the way another tool would read them.

  report_check.py schema REPORT.json SCHEMA.json   validate (python3-jsonschema); exit 1 naming the error
  report_check.py heatmap PAGE.html CASE_ID BACKEND OUTPUT
      parse the page as XML (it must be well-formed) and print the error map drawn for that case's output:
      "rows R cols C", then one "row col ratio" line per cell past the tolerance (ratio > 1)
  report_check.py html PAGE.html                    parse as XML and with html.parser; print the section count
"""
import html.parser
import json
import sys
import xml.dom.minidom


def schema(report, schema_file):
    import jsonschema
    with open(report) as f:
        doc = json.load(f)
    with open(schema_file) as f:
        sch = json.load(f)
    jsonschema.Draft202012Validator.check_schema(sch)
    errors = sorted(jsonschema.Draft202012Validator(sch).iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:5]:
        print("invalid at /%s: %s" % ("/".join(str(p) for p in e.path), e.message[:300]))
    return 1 if errors else 0


def ratio(text):
    return float(text)  # "inf" and "nan" parse too


def heatmap(page, case_id, backend, output):
    dom = xml.dom.minidom.parse(page)
    for sec in dom.getElementsByTagName("section"):
        if sec.getAttribute("data-id") != case_id or sec.getAttribute("data-backend") != backend:
            continue
        for svg in sec.getElementsByTagName("svg"):
            if svg.getAttribute("class") != "heatmap" or svg.getAttribute("data-output") != output:
                continue
            print("rows %s cols %s" % (svg.getAttribute("data-rows"), svg.getAttribute("data-cols")))
            for rect in svg.getElementsByTagName("rect"):
                r = ratio(rect.getAttribute("data-ratio"))
                if not r <= 1:
                    print("%s %s %s" % (rect.getAttribute("data-row"), rect.getAttribute("data-col"), r))
            return 0
    print("no heatmap of %s for %s on %s" % (output, case_id, backend))
    return 1


def page(path):
    xml.dom.minidom.parse(path)
    p = html.parser.HTMLParser()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    p.feed(text)
    p.close()
    for banned in ("<script", "http://", "https://", "<link", "@import", "url("):
        allowed = banned == "http://" and text.count(banned) == text.count('xmlns="http://www.w3.org/')
        if banned in text and not allowed:
            print("the page fetches or runs something: %s" % banned)
            return 1
    print("sections %d" % text.count('<section class="case"'))
    return 0


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    sys.exit({"schema": schema, "heatmap": heatmap, "html": page}[cmd](*args))
