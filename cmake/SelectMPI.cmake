# Chooses the MPI library (and the parallel HDF5 built with it) before
# find_package(MPI/HDF5).  ONLINEWS_MPI=openmpi or mpich selects Debian's
# side-by-side installations by their suffixed wrapper names (mpicc.mpich,
# mpiexec.mpich, h5pcc.mpich); empty keeps CMake's default (the system's
# mpicc).  Explicit MPI_C_COMPILER/MPIEXEC_EXECUTABLE/HDF5_C_COMPILER_EXECUTABLE
# settings win over both.
set(ONLINEWS_MPI "" CACHE STRING "MPI library to build for: openmpi, mpich, or empty for the default mpicc")
set_property(CACHE ONLINEWS_MPI PROPERTY STRINGS "" openmpi mpich)
if(ONLINEWS_MPI)
  if(NOT ONLINEWS_MPI MATCHES "^(openmpi|mpich)$")
    message(FATAL_ERROR "ONLINEWS_MPI=${ONLINEWS_MPI}: use openmpi or mpich (or leave it empty)")
  endif()
  foreach(pair "MPI_C_COMPILER;mpicc" "MPI_Fortran_COMPILER;mpifort" "MPIEXEC_EXECUTABLE;mpiexec"
               "HDF5_C_COMPILER_EXECUTABLE;h5pcc")
    list(GET pair 0 var)
    list(GET pair 1 tool)
    if(NOT DEFINED ${var})
      unset(_onlinews_tool CACHE)  # (find_program keeps a cached result: CMake 3.18 has no NO_CACHE)
      find_program(_onlinews_tool ${tool}.${ONLINEWS_MPI})
      if(NOT _onlinews_tool)
        message(FATAL_ERROR "ONLINEWS_MPI=${ONLINEWS_MPI}: ${tool}.${ONLINEWS_MPI} not found "
                            "(Debian: apt install lib${ONLINEWS_MPI}-dev libhdf5-${ONLINEWS_MPI}-dev)")
      endif()
      set(${var} ${_onlinews_tool} CACHE FILEPATH "${tool} of ${ONLINEWS_MPI}")
      unset(_onlinews_tool CACHE)
    endif()
  endforeach()
endif()

# After find_package(MPI) and find_package(HDF5): a parallel HDF5 built with
# another MPI links and then fails at run time, so refuse it here.
function(onlinews_check_mpi_pair)
  include(CheckSymbolExists)
  set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
  check_symbol_exists(OPEN_MPI "mpi.h" ONLINEWS_HAVE_OPEN_MPI)
  check_symbol_exists(MPICH_VERSION "mpi.h" ONLINEWS_HAVE_MPICH)
  if(ONLINEWS_HAVE_OPEN_MPI)
    set(flavour openmpi)
  elseif(ONLINEWS_HAVE_MPICH)
    set(flavour mpich)
  else()
    set(flavour other)
  endif()
  set(ONLINEWS_MPI_FLAVOUR ${flavour} PARENT_SCOPE)
  if(ONLINEWS_MPI AND NOT ONLINEWS_MPI STREQUAL flavour)  # (a tree configured before for another MPI)
    message(FATAL_ERROR "ONLINEWS_MPI=${ONLINEWS_MPI}, but this build directory uses ${flavour} "
                        "(${MPI_C_COMPILER}): configure a fresh build directory")
  endif()
  foreach(other openmpi mpich)
    if(NOT other STREQUAL flavour AND "${HDF5_C_LIBRARIES};${HDF5_C_INCLUDE_DIRS}" MATCHES "/hdf5/${other}([/;]|$)")
      message(FATAL_ERROR "MPI is ${flavour} (${MPI_C_COMPILER}) but HDF5 was built with ${other} "
                          "(${HDF5_C_LIBRARIES}).  Configure a fresh build directory with "
                          "-DONLINEWS_MPI=${flavour}, or install libhdf5-${flavour}-dev.")
    endif()
  endforeach()
  message(STATUS "onlinews: MPI ${flavour} (${MPI_C_COMPILER}), mpiexec ${MPIEXEC_EXECUTABLE}")
endfunction()
