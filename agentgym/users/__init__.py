"""The simulated users: the language engine they read messages with (`understanding`), the typo
model of their messages, how they pick among phrasings (`picks`) and the rule-based user the
families' users build on."""
