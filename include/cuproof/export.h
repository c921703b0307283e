/*
 * CP_API marks what libcuproof exports. The library is built with hidden
 * visibility by default, so that only the functions declared in these
 * public headers are part of its interface; a program that compiles the
 * sources in (CUPROOF_STATIC) needs no marking.
 */
#ifndef CUPROOF_EXPORT_H
#define CUPROOF_EXPORT_H

#if defined(CUPROOF_STATIC)
#define CP_API
#else
#define CP_API __attribute__((visibility("default")))
#endif

#endif
