/*
 * The static no-op program `sysgauge spawn` starts as its "static" target.
 *
 * Why assembly: the point of this program is to cost nothing once the kernel
 * has loaded it, so that the numbers show the price of the spawning method
 * and not of a dynamic loader, a C runtime or relocations. Linked with
 * -nostdlib -static, it is one page of code that makes at most four system
 * calls. build.rs assembles it for the target; sysgauge embeds the result and
 * writes it into its scratch directory at run time.
 *
 * Behaviour:
 *   no-op                exit(0) at once;
 *   no-op FILE           append one byte to FILE (created 0644), then exit(0),
 *                        or exit(1) if FILE cannot be opened or written.
 * The second form lets tests and the benchmark's own check count how many
 * times the target really ran, instead of trusting a return code.
 */

#if defined(__x86_64__)

        .intel_syntax noprefix
        .text
        .globl  _start
_start:
        mov     rax, [rsp]              /* argc */
        cmp     rax, 2
        jb      ok
        mov     edi, -100               /* AT_FDCWD */
        mov     rsi, [rsp + 16]         /* argv[1] */
        mov     edx, 0x441              /* O_WRONLY | O_CREAT | O_APPEND */
        mov     r10d, 420               /* 0644 */
        mov     eax, 257                /* openat */
        syscall
        test    rax, rax
        js      fail
        mov     edi, eax                /* fd */
        lea     rsi, [rip + mark]
        mov     edx, 1
        mov     eax, 1                  /* write */
        syscall
        cmp     rax, 1
        jne     fail
ok:
        xor     edi, edi
        mov     eax, 231                /* exit_group */
        syscall
fail:
        mov     edi, 1
        mov     eax, 231                /* exit_group */
        syscall
mark:
        .byte   0x2e

#elif defined(__aarch64__)

        .text
        .globl  _start
_start:
        ldr     x0, [sp]                /* argc */
        cmp     x0, #2
        b.lo    ok
        mov     x0, #-100               /* AT_FDCWD */
        ldr     x1, [sp, #16]           /* argv[1] */
        mov     x2, #0x441              /* O_WRONLY | O_CREAT | O_APPEND */
        mov     x3, #420                /* 0644 */
        mov     x8, #56                 /* openat */
        svc     #0
        cmp     x0, #0
        b.lt    fail
        adr     x1, mark                /* x0 still holds the fd */
        mov     x2, #1
        mov     x8, #64                 /* write */
        svc     #0
        cmp     x0, #1
        b.ne    fail
ok:
        mov     x0, #0
        mov     x8, #94                 /* exit_group */
        svc     #0
fail:
        mov     x0, #1
        mov     x8, #94                 /* exit_group */
        svc     #0
mark:
        .byte   0x2e

#elif defined(__arm__)

        /* ARM mode, not Thumb: the same code runs on ARMv6 (the first
         * Raspberry Pi) and ARMv7. Arguments in r0-r3, the call number
         * in r7 (EABI). */
        .syntax unified
        .arm
        .text
        .globl  _start
_start:
        ldr     r0, [sp]                /* argc */
        cmp     r0, #2
        blo     ok
        mvn     r0, #99                 /* AT_FDCWD (-100) */
        ldr     r1, [sp, #8]            /* argv[1] */
        ldr     r2, =0x441              /* O_WRONLY | O_CREAT | O_APPEND */
        ldr     r3, =420                /* 0644 */
        ldr     r7, =322                /* openat */
        svc     #0
        cmp     r0, #0
        blt     fail
        adr     r1, mark                /* r0 still holds the fd */
        mov     r2, #1
        mov     r7, #4                  /* write */
        svc     #0
        cmp     r0, #1
        bne     fail
ok:
        mov     r0, #0
        mov     r7, #248                /* exit_group */
        svc     #0
fail:
        mov     r0, #1
        mov     r7, #248                /* exit_group */
        svc     #0
        .ltorg
mark:
        .byte   0x2e

#else
#error "the static no-op helper exists for x86_64, aarch64 and 32-bit ARM only"
#endif

        .section .note.GNU-stack,"",%progbits
