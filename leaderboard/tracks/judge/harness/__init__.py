"""lm-eval task configs of the judge track: ``_judge_template_yaml`` and its hooks."""
