# orderhub_embed_sql(TARGET DIR NAME): a static library that holds every DIR/NNNN_*.sql file as a
# string, so an installed binary needs no source tree. The files are re-read whenever one changes.
function(orderhub_embed_sql target dir name)
  file(GLOB sql_files CONFIGURE_DEPENDS ${dir}/*.sql)
  list(SORT sql_files)
  set(out ${CMAKE_BINARY_DIR}/generated/${name}_migrations.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNAME=${name} -DDIR=${dir}
            -P ${CMAKE_SOURCE_DIR}/cmake/embed_sql_files.cmake
    DEPENDS ${sql_files} ${CMAKE_SOURCE_DIR}/cmake/embed_sql_files.cmake
    COMMENT "Embedding ${name} migrations"
    VERBATIM)
  add_library(${target} STATIC ${out})
  target_link_libraries(${target} PUBLIC project_options)
endfunction()

# orderhub_embed_web(TARGET DIR): a static library holding every file of DIR (the dashboard's page), so an
# installed binary needs no source tree.
function(orderhub_embed_web target dir)
  file(GLOB web_files CONFIGURE_DEPENDS ${dir}/*)
  set(out ${CMAKE_BINARY_DIR}/generated/web_files.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DDIR=${dir} -P ${CMAKE_SOURCE_DIR}/cmake/embed_web_files.cmake
    DEPENDS ${web_files} ${CMAKE_SOURCE_DIR}/cmake/embed_web_files.cmake
    COMMENT "Embedding the dashboard's files"
    VERBATIM)
  add_library(${target} STATIC ${out})
  target_link_libraries(${target} PUBLIC project_options)
endfunction()
