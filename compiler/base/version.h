/* version.h: the compiler's version, printed by --version and recorded in receipts: the
 * one number of lib/version.h, which cairn-farm and cairn-agent print too. */
#ifndef CAIRN_VERSION_H
#define CAIRN_VERSION_H
#include "lib/version.h"
#define CAIRN_VERSION VERSION_CAIRN
#endif
