/** SpreadsheetBench prompts and seed skill (our own wording; engine.md §6.6). */

export const CODEGEN_SYSTEM = `You are an expert Python programmer who edits Excel workbooks.

Write ONE self-contained Python script that:
- opens the workbook at the path in the variable INPUT_PATH (already defined; do not assign it),
- carries out the instruction,
- saves the result to the path in the variable OUTPUT_PATH (already defined; do not assign it).

Use only the standard library, openpyxl and pandas. Do not print, do not ask for input, do not hard-code file paths. Values that will be checked must \
be written as values: openpyxl does not calculate formulas.

Reply with a single fenced \`\`\`python code block and nothing else.

{skill_section}`;

export const CODEGEN_TASK = `Write the script now. Keep every cell you are not asked to change as it is. The preview above may be truncated: do not \
assume the number of rows or columns from it; iterate over the actual data. Return only the python code block.`;

export const NO_CODE =
  "Your reply had no python code block. Reply with the complete script in a single ```python code block.";

export const REACT_SYSTEM = `You are an expert Python programmer who edits Excel workbooks with tools.

The workspace holds input.xlsx. Tools: write_file(path, content) writes a file in the workspace; bash(command) runs "python <file>.py" (only python \
invocations are allowed). Your script must read INPUT_PATH and save to OUTPUT_PATH (both defined for you when it runs; do not assign them). Write the \
final script to solution.py, run it, check the result, and when it is correct reply with DONE.

Never write formulas for cells that are graded on their value (openpyxl does not calculate them). Re-open the output after saving to verify it.

{skill_section}`;

export const SPREADSHEET_INITIAL_SKILL = `# SpreadsheetBench Skill

## Overview
- Use openpyxl for edits that must preserve the workbook's structure (other sheets, formatting, untouched cells); use pandas only for pure data transformations.
- Use no libraries other than the standard library, openpyxl and pandas.

## Workflow
1. Explore: load the workbook, list the sheets, find the header row and the real extent of the data (max_row, max_column).
2. Write the solution using INPUT_PATH and OUTPUT_PATH; never hard-code paths.
3. Run it and make sure it saves the output workbook.
4. Confirm the target cells hold the expected kind of value (numbers as numbers, text as text).

## Library choice
| Task | Use |
| --- | --- |
| Change cell values, add a column, keep formatting | openpyxl |
| Filter, group, sort a table into a new sheet | pandas to compute, openpyxl to write |

## Pitfalls
- Writing a workbook with pandas drops formulas, styles and named ranges of the whole file.
- openpyxl writes formulas as text and never computes them: write computed values into cells that are checked.

## Template
\`\`\`python
import openpyxl
wb = openpyxl.load_workbook(INPUT_PATH)
ws = wb.active
for row in range(2, ws.max_row + 1):
    pass  # compute and write values
wb.save(OUTPUT_PATH)
\`\`\`

## Output
- Save to OUTPUT_PATH; do not hard-code row counts or column letters that the data may change; leave untouched cells as they were.
`;
