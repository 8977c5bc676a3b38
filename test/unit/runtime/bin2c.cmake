# cmake -DINPUT=file.spv -DOUTPUT=file.h -DNAME=kName -P bin2c.cmake: the
# file's bytes as `static const unsigned char NAME[]`, for fake models that
# embed a SPIR-V module as a compiled model does.
file(READ ${INPUT} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n  " bytes "${bytes}")
file(WRITE ${OUTPUT} "/* Generated from ${INPUT} by bin2c.cmake. */\n"
  "static const unsigned char ${NAME}[] = {\n  ${bytes}\n};\n")
