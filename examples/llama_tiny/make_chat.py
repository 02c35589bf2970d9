#!/usr/bin/python3
"""Writes chat.jsonl: short conversations about the GPL (text.txt), for
llama_tiny's chat fine-tune (--data examples/llama_tiny/chat.jsonl). Each
question comes in several wordings, each with one answer taken from the
license, so that a small model can learn the answers in one epoch."""
import json
import os

ANSWERS = {
    "Can I share the program?": "Yes. You may convey verbatim copies of the program's source code as you receive it.",
    "Can I change the program?": "Yes. You may modify your copy and convey the modified source versions.",
    "May I charge for copies?": "Yes. You may charge any price or no price for each copy that you convey.",
    "Is there a warranty?": "No. There is no warranty for the program, to the extent permitted by applicable law.",
    "What must come with a binary?": "The Corresponding Source, under the terms of this License.",
    "Can I add restrictions?": "No. You may not impose any further restrictions on the exercise of the rights granted.",
}
WORDINGS = ["{q}", "Please tell me: {q}", "A quick question. {q}", "{q} Answer briefly.", "I wonder. {q}"]
SYSTEM = "You answer questions about the GNU General Public License, version 3."

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "chat.jsonl"), "w", encoding="utf-8") as f:
    n = 0
    for w, wording in enumerate(WORDINGS):
        for q, a in ANSWERS.items():
            messages = [{"role": "user", "content": wording.format(q=q)}, {"role": "assistant", "content": a}]
            if n % 3 == 0:
                messages.insert(0, {"role": "system", "content": SYSTEM})
            if n % 4 == 1:  # a second turn
                q2, a2 = list(ANSWERS.items())[(n + 1) % len(ANSWERS)]
                messages += [{"role": "user", "content": q2}, {"role": "assistant", "content": a2}]
            f.write(json.dumps({"messages": messages}, ensure_ascii=False) + "\n")
            n += 1
print(n, "conversations")
