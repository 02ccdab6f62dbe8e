"""How sure an answer is: the signals a run leaves behind (``signals``) and the fitted model that turns
them into a level, high, medium or low, with its reasons in words (``confidence``)."""
