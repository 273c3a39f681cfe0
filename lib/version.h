/* version.h: the version of CAIRN, one number for cairn, cairn-farm and cairn-agent
 * (naming: see err.h): `--version` prints it, receipts and evidence record it. */
#ifndef CAIRN_LIB_VERSION_H
#define CAIRN_LIB_VERSION_H

#define VERSION_CAIRN "0.1.0"

#endif
