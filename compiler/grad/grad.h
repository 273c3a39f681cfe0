/* grad.h: derive grad, reverse mode, source to source (docs/gradients.md): the one
 * entry the checker calls. Below the checker in the pass order, above syntax/. */
#ifndef CAIRN_GRAD_H
#define CAIRN_GRAD_H

#include <stdbool.h>

#include "syntax/syntax.h"

/* For each `derive grad` item, after its target function checked cleanly: appends the
 * derived function(s) to p (program_add_item), fresh and unchecked; the checker then
 * checks them like any other. Returns false after reporting to d. */
bool cairn_derive_grad(Program *p, Item *derive, Diags *d);

#endif
